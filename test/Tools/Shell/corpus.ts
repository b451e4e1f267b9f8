/**
 * A corpus of hostile and benign shell commands for the Bash tool's analysis.
 *
 * Hostile entries are drawn from publicly reported bypasses of agent shell tools (Claude Code, Codex CLI,
 * Gemini CLI and others); `source` cites the report, or says `derived: <technique>` when the entry is our own
 * variation. Every hostile command, if it ran, would create a file named `PWNED` in the current working
 * directory (and touch nothing outside it), so an end-to-end test can run each one in a temporary git
 * repository and assert that `PWNED` does not exist. A few need a tool that may be missing (`rg`, `tree`) or a
 * terminal (git's pager); they are still hostile, and harmless where they cannot run.
 *
 * Benign entries are read-only commands that succeed in a fresh git repository with one commit and a file
 * `README.md`, using only coreutils, grep, sed, find, diffutils and git.
 */

/** A command that must never be classified read-only. */
export interface HostileCommand {
  readonly command: string
  readonly why: string
  readonly source: string
}

/** A read-only command that must be classified read-only. */
export interface BenignCommand {
  readonly command: string
  readonly note: string
}

const CC_CHAINING =
  "anthropics/claude-code#4956 \"Security Vulnerability: Bash Permission Bypass via Command Chaining\" https://github.com/anthropics/claude-code/issues/4956"
const CC_CD_CHAIN =
  "anthropics/claude-code#28784 \"Permission rule Bash(cd:*) allows arbitrary command execution via && chaining\" https://github.com/anthropics/claude-code/issues/28784"
const CC_GIT_ADD_CHAIN =
  "anthropics/claude-code#16180 \"Permission bypass when commands are chained with &&\" https://github.com/anthropics/claude-code/issues/16180"
const CC_WRAPPERS =
  "anthropics/claude-code#92542 \"Bash deny rules bypassed by any wrapper program outside ax()'s 8-item unwrap list\" https://github.com/anthropics/claude-code/issues/92542"
const GEMINI_PIPES =
  "google-gemini/gemini-cli#11510 \"Shell command allowlists do not apply to piped commands\" https://github.com/google-gemini/gemini-cli/issues/11510"
const GEMINI_CHAIN_REDIRECT =
  "google-gemini/gemini-cli#11766 \"Shell command allowlists do not apply to chained or redirected commands\" https://github.com/google-gemini/gemini-cli/issues/11766"
const GEMINI_PROCSUB =
  "google-gemini/gemini-cli#6010 \"Block >() process substitution in shell commands\" https://github.com/google-gemini/gemini-cli/pull/6010"
const GEMINI_EVAL =
  "google-gemini/gemini-cli#5495 \"Bypassing Gemini CLI Command Restrictions via eval Injection\" https://github.com/google-gemini/gemini-cli/issues/5495"
const CODEX_FIND =
  "openai/codex#482 \"do not auto-approve the find command if it contains options that write files or spawn commands\" https://github.com/openai/codex/pull/482"
const CODEX_GIT_GLOBALS =
  "openai/codex#15796 \"Block unsafe git global options from safe allowlist\" https://github.com/openai/codex/pull/15796"
const CODEX_GIT_PAGINATE =
  "openai/codex#18694 \"Treat git global pager options as unsafe for auto-approval\" https://github.com/openai/codex/issues/18694"
const FIND_EXEC_PLUS =
  "andrewyng/openworker#279 \"fix: block find -exec auto-run via shell allowlist\" ({} + form) https://github.com/andrewyng/openworker/pull/279"
const SED_E =
  "unslothai/unsloth#7483 \"Gate the sed commands that run a shell\" https://github.com/unslothai/unsloth/pull/7483"
const SED_W =
  "microsoft/vscode#329216 \"Block auto-approve for sed scripts that run commands or write files\" https://github.com/microsoft/vscode/pull/329216"
const SED_MULTI_E =
  "agentscope-ai/agentscope#2747 \"fix(tool): check every sed -e expression against the denylist\" https://github.com/agentscope-ai/agentscope/pull/2747"
const SORT_UNIQ =
  "amd/gaia#2740 \"close find -exec / write side-doors in shell command whitelist (CWE-184)\" (sort -o, -oFILE, -ro, --out, uniq INPUT OUTPUT) https://github.com/amd/gaia/pull/2740"
const SORT_COMPRESS_RG_PRE =
  "Kilo-Org/kilocode#11890 \"fix(cli): close read-only bash exec-flag escapes\" (sort --compress-program, rg --pre) https://github.com/Kilo-Org/kilocode/pull/11890"
const RG_PRE =
  "aliyun/iac-code#88 \"Readonly whitelist commands (find/fd, sed, rg, sort) have unguarded exec/delete arguments\" https://github.com/aliyun/iac-code/issues/88"
const GIT_DIFF_OUTPUT =
  "kirodotdev/KiroCrew#5037 \"read-only allowlist entries gate only the command head, so ... git diff --output writes any path\" https://github.com/kirodotdev/KiroCrew/issues/5037"
const GIT_GREP_PAGER =
  "makecindy/cindy#964 review: git grep --open-files-in-pager and --ext-diff run programs https://github.com/makecindy/cindy/pull/964"
const GIT_FSMONITOR =
  "dotdevdotdev/agentwire-dev#921 \"git -c core.sshCommand / core.fsmonitor execute arbitrary commands and nothing catches them\" https://github.com/dotdevdotdev/agentwire-dev/issues/921"
const SUBSTITUTION =
  "gotgenes/pi-packages#306 \"Evaluate commands inside command substitution and subshells against the permission rules\" https://github.com/gotgenes/pi-packages/issues/306"
const SUBST_AND_WRAPPERS =
  "agentforce314/clawcodex#626 \"harden Bash permission normalization (substitution guard + deny wrappers)\" (echo \"$(rm ...)\", timeout/nohup/nice/stdbuf, \\rm) https://github.com/agentforce314/clawcodex/pull/626"
const XARGS_TIMEOUT =
  "carlos-emr/carlos#281 review: \"xargs * can bypass deny-listed commands\" (also timeout/time) https://github.com/carlos-emr/carlos/pull/281"
const ANSI_C =
  "Dicklesworthstone/destructive_command_guard#215 \"ANSI-C quoted / hex-escaped command names bypass all destructive-pattern matching\" https://github.com/Dicklesworthstone/destructive_command_guard/issues/215"
const IFS =
  "swisskyrepo/PayloadsAllTheThings#681 \"Prefer ${IFS} to $IFS when doing filter bypass without space\" https://github.com/swisskyrepo/PayloadsAllTheThings/pull/681"
const POSTAL =
  "andrefetch/postal#2 \"Compound shell commands are auto-approved based on their first word\" https://github.com/andrefetch/postal/issues/2"

/** Commands that must never be classified read-only; each would create `./PWNED` if run. */
export const hostile: ReadonlyArray<HostileCommand> = [
  // chaining after an allowed prefix
  { command: "ls; touch PWNED", why: "`;` chains a write after a read", source: CC_CHAINING },
  { command: "ls && touch PWNED", why: "`&&` chains a write after a read", source: CC_CHAINING },
  { command: "ls ./missing || touch PWNED", why: "`||` runs the write when the read fails", source: CC_CHAINING },
  { command: "ls\ntouch PWNED", why: "a newline separates commands", source: CC_CHAINING },
  { command: "echo ok # harmless\ntouch PWNED", why: "a comment hides nothing after the newline", source: "derived: comment then newline" },
  { command: "ls & touch PWNED", why: "`&` backgrounds the read and runs the write", source: CC_CHAINING },
  { command: "git status; touch PWNED", why: "allowed git read chained with a write", source: CC_GIT_ADD_CHAIN },
  { command: "git log --oneline -1 && touch PWNED", why: "allowed git read chained with a write", source: CC_GIT_ADD_CHAIN },
  { command: "cd . && touch PWNED", why: "`cd` prefix chained with a write", source: CC_CD_CHAIN },
  { command: "cat README.md | tee PWNED", why: "a later pipeline stage writes", source: GEMINI_PIPES },
  { command: "ls | touch PWNED", why: "a later pipeline stage writes", source: GEMINI_PIPES },
  { command: "(touch PWNED)", why: "a subshell runs a write", source: "derived: subshell" },
  { command: "{ ls; touch PWNED; }", why: "a brace group runs a write", source: "derived: brace group" },
  { command: "! touch PWNED", why: "negation does not neutralise the command", source: "derived: pipeline negation" },
  { command: "time touch PWNED", why: "the `time` keyword still runs the command", source: XARGS_TIMEOUT },
  // substitutions
  { command: "echo $(touch PWNED)", why: "command substitution runs before echo", source: SUBST_AND_WRAPPERS },
  { command: "echo `touch PWNED`", why: "backtick substitution", source: SUBSTITUTION },
  { command: "echo \"$(touch PWNED)\"", why: "command substitution inside double quotes", source: SUBST_AND_WRAPPERS },
  { command: "ls $(touch PWNED)", why: "substitution in an argument of an allowed command", source: SUBSTITUTION },
  { command: "echo `echo \\`touch PWNED\\``", why: "nested escaped backticks", source: "derived: nested backticks" },
  { command: "echo ${X:-$(touch PWNED)}", why: "substitution inside a parameter default", source: "derived: parameter expansion operand" },
  { command: "echo $(( $(touch PWNED)1 ))", why: "substitution inside arithmetic", source: "derived: arithmetic expansion" },
  { command: "[[ -n $(touch PWNED) ]]", why: "substitution inside [[ ]]", source: "derived: test command" },
  { command: "case $(touch PWNED) in *) ls;; esac", why: "substitution in a case word", source: "derived: case word" },
  { command: "for f in $(touch PWNED); do ls; done", why: "substitution in a for word list", source: "derived: for word list" },
  { command: "cat <(touch PWNED)", why: "input process substitution runs a command", source: GEMINI_PROCSUB },
  { command: "echo x >(touch PWNED)", why: "output process substitution runs a command", source: GEMINI_PROCSUB },
  { command: "diff <(touch PWNED) README.md", why: "process substitution in an allowed command", source: GEMINI_PROCSUB },
  { command: "cat <<EOF\n$(touch PWNED)\nEOF", why: "an unquoted here-document body is expanded", source: "derived: unquoted here-document" },
  { command: "cat <<< \"$(touch PWNED)\"", why: "a here-string is expanded", source: "derived: here-string" },
  { command: "echo ${X:=$(touch PWNED)}", why: "assigning expansion with a substitution", source: "derived: ${X:=...}" },
  // find
  { command: "find . -name README.md -exec touch PWNED \\;", why: "find -exec runs a command", source: CODEX_FIND },
  { command: "find . -name README.md -exec touch PWNED {} +", why: "find -exec ... {} + runs a command", source: FIND_EXEC_PLUS },
  { command: "find . -maxdepth 0 -execdir touch PWNED \\;", why: "find -execdir runs a command", source: CODEX_FIND },
  { command: "find . -maxdepth 0 -fprint PWNED", why: "find -fprint writes a file", source: CODEX_FIND },
  { command: "find . -maxdepth 0 -fprint0 PWNED", why: "find -fprint0 writes a file", source: CODEX_FIND },
  { command: "find . -maxdepth 0 -fprintf PWNED '%p'", why: "find -fprintf writes a file", source: CODEX_FIND },
  { command: "find . -maxdepth 0 -fls PWNED", why: "find -fls writes a file", source: CODEX_FIND },
  // sed
  { command: "sed -n '1e touch PWNED' README.md", why: "GNU sed `e` command runs a shell", source: SED_E },
  { command: "sed -n 's/.*/touch PWNED/ep' README.md", why: "GNU sed `s///e` runs the pattern space", source: SED_E },
  { command: "sed -n '1w PWNED' README.md", why: "sed `w` writes a file", source: SED_W },
  { command: "sed -n '1W PWNED' README.md", why: "sed `W` writes a file", source: SED_W },
  { command: "sed -n 's/^/x/w PWNED' README.md", why: "sed `s///w` writes a file", source: SED_W },
  { command: "sed -n -e p -e '1w PWNED' README.md", why: "a second -e expression writes", source: SED_MULTI_E },
  { command: "sed -n -i '1w PWNED' README.md", why: "sed -i edits in place (and w writes)", source: POSTAL },
  // sort, uniq, other writers
  { command: "sort -o PWNED README.md", why: "sort -o writes a file", source: SORT_UNIQ },
  { command: "sort -oPWNED README.md", why: "attached -o value", source: SORT_UNIQ },
  { command: "sort -ro PWNED README.md", why: "-o inside a short-option cluster", source: SORT_UNIQ },
  { command: "sort --output=PWNED README.md", why: "sort --output writes a file", source: SORT_UNIQ },
  { command: "sort --out=PWNED README.md", why: "getopt_long accepts abbreviations of --output", source: SORT_UNIQ },
  { command: "printf 'touch PWNED\\n%.0s' $(seq 1 2000) | sort -S 1b --compress-program=sh", why: "sort runs the compress program", source: SORT_COMPRESS_RG_PRE },
  { command: "uniq README.md PWNED", why: "uniq's second operand is an output file", source: SORT_UNIQ },
  { command: "xxd README.md PWNED", why: "xxd's second operand is an output file", source: "derived: xxd outfile operand" },
  { command: "tree -o PWNED", why: "tree -o writes a file", source: "bigduu/Bamboo-agent#76 \"read-only Bash command allowlist\" (sort -o/tree -o, uniq out-arg) https://github.com/bigduu/Bamboo-agent/pull/76" },
  { command: "echo 'touch PWNED' > pwn.sh && chmod +x pwn.sh && rg --pre ./pwn.sh . README.md", why: "rg --pre runs a preprocessor program", source: RG_PRE },
  { command: "date --set=not-a-date 2>/dev/null || touch PWNED", why: "date --set sets the clock (an unparsable date, so running it changes nothing)", source: "Tracer-Cloud/opensre#5840 review (date/hostname/sort/rg read-only checks) https://github.com/Tracer-Cloud/opensre/pull/5840" },
  // git
  { command: "git -c core.fsmonitor='touch PWNED' status", why: "git -c sets a hook that status runs", source: GIT_FSMONITOR },
  { command: "git -c core.pager='touch PWNED' log", why: "git -c sets the pager (runs when stdout is a terminal)", source: CODEX_GIT_GLOBALS },
  { command: "git -p -c core.pager='touch PWNED' log -1", why: "git -p forces the pager (runs when stdout is a terminal)", source: CODEX_GIT_PAGINATE },
  { command: "git -C . -c core.fsmonitor='touch PWNED' status", why: "-C and -c global options", source: CODEX_GIT_GLOBALS },
  { command: "git -c alias.st='!touch PWNED' st", why: "a shell alias runs a command", source: GIT_FSMONITOR },
  { command: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch PWNED' git status", why: "configuration through environment assignments", source: "derived: GIT_CONFIG_* environment" },
  { command: "git diff --output=PWNED", why: "git diff --output writes a file", source: GIT_DIFF_OUTPUT },
  { command: "git log -1 --output=PWNED", why: "git log --output writes a file", source: GIT_DIFF_OUTPUT },
  { command: "git show --output=PWNED HEAD", why: "git show --output writes a file", source: GIT_DIFF_OUTPUT },
  { command: "git grep --open-files-in='touch PWNED' -e .", why: "git parse-options accepts abbreviated long options (`--open-files-in-pager`)", source: "derived: git parse-options abbreviation" },
  { command: "git -c diff.external='touch PWNED' log -1 -p --ext-diff", why: "--ext-diff runs the external diff program", source: GIT_GREP_PAGER },
  { command: "GIT_EXTERNAL_DIFF='touch PWNED' git log -1 -p --ext-diff", why: "external diff from the environment", source: GIT_GREP_PAGER },
  { command: "git grep --open-files-in-pager='touch PWNED' -e .", why: "git grep -O runs a pager program", source: GIT_GREP_PAGER },
  { command: "git config core.fsmonitor 'touch PWNED' && git status", why: "git config writes configuration that runs code", source: GIT_FSMONITOR },
  // redirections
  { command: "ls > PWNED", why: "output redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls >> PWNED", why: "append redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls &> PWNED", why: "&> writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls 2> PWNED", why: "stderr redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls >| PWNED", why: "clobbering redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls >& PWNED", why: ">&word writes a file", source: "derived: >&file" },
  { command: "ls 1>PWNED 2>&1", why: "fd 1 redirected to a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "cat <> PWNED", why: "<> opens (and creates) a file for writing", source: "derived: read-write redirection" },
  { command: "ls {fd}>PWNED", why: "a descriptor-variable redirection writes a file", source: "derived: {fd}> redirection" },
  { command: "{ ls; } > PWNED", why: "redirection on a compound command", source: "derived: compound redirection" },
  { command: "while false; do :; done > PWNED", why: "redirection on a loop", source: "derived: compound redirection" },
  { command: "exec 3>PWNED", why: "exec opens a file", source: "derived: exec redirection" },
  { command: "echo hi | tee PWNED", why: "tee writes files", source: GEMINI_PIPES },
  { command: "jq -n '1' > PWNED", why: "redirection after a read-only tool", source: GEMINI_CHAIN_REDIRECT },
  // wrappers and interpreters
  { command: "ls | xargs touch PWNED", why: "xargs runs a command", source: XARGS_TIMEOUT },
  { command: "echo PWNED | xargs touch", why: "xargs builds the command from input", source: XARGS_TIMEOUT },
  { command: "env touch PWNED", why: "env runs a command", source: CC_WRAPPERS },
  { command: "env -S 'touch PWNED'", why: "env -S splits a string into a command", source: CC_WRAPPERS },
  { command: "timeout 5 touch PWNED", why: "timeout runs a command", source: SUBST_AND_WRAPPERS },
  { command: "nice -n 1 touch PWNED", why: "nice runs a command", source: SUBST_AND_WRAPPERS },
  { command: "nohup touch PWNED >/dev/null 2>&1", why: "nohup runs a command", source: SUBST_AND_WRAPPERS },
  { command: "stdbuf -oL touch PWNED", why: "stdbuf runs a command", source: SUBST_AND_WRAPPERS },
  { command: "command touch PWNED", why: "command runs a command", source: CC_WRAPPERS },
  { command: "builtin eval 'touch PWNED'", why: "builtin runs eval", source: CC_WRAPPERS },
  { command: "eval 'touch PWNED'", why: "eval runs a string", source: GEMINI_EVAL },
  { command: "bash -c 'touch PWNED'", why: "a shell runs a string", source: GEMINI_EVAL },
  { command: "sh -c 'touch PWNED'", why: "a shell runs a string", source: GEMINI_EVAL },
  { command: "echo 'touch PWNED' | bash", why: "a shell reads commands from a pipe", source: "derived: pipe to shell" },
  { command: "source /dev/stdin <<< 'touch PWNED'", why: "source runs a file", source: "derived: source" },
  { command: ". /dev/stdin <<< 'touch PWNED'", why: "`.` runs a file", source: "derived: dot builtin" },
  { command: "exec touch PWNED", why: "exec replaces the shell with a command", source: "derived: exec" },
  { command: "awk 'BEGIN { system(\"touch PWNED\") }'", why: "awk system() runs a command", source: "derived: awk system()" },
  { command: "awk 'BEGIN { print \"x\" > \"PWNED\" }'", why: "awk print > writes a file", source: "derived: awk redirection" },
  { command: "python3 -c 'open(\"PWNED\", \"w\")'", why: "an interpreter writes a file", source: "derived: interpreter" },
  { command: "node -e 'require(\"fs\").writeFileSync(\"PWNED\", \"\")'", why: "an interpreter writes a file", source: "derived: interpreter" },
  { command: "perl -e 'open(my $f, \">\", \"PWNED\")'", why: "an interpreter writes a file", source: "derived: interpreter" },
  // obfuscated command names
  { command: "\\touch PWNED", why: "escaped command name", source: SUBST_AND_WRAPPERS },
  { command: "\"touch\" PWNED", why: "quoted command name", source: "derived: quoted command name" },
  { command: "t'ou'ch PWNED", why: "quotes split inside the command name", source: "derived: quote splitting" },
  { command: "/usr/bin/touch PWNED", why: "path-qualified command", source: "derived: path-qualified command" },
  { command: "$'\\x74ouch' PWNED", why: "ANSI-C hex escapes in the command name", source: ANSI_C },
  { command: "$'\\164\\157\\165\\143\\150' PWNED", why: "ANSI-C octal escapes in the command name", source: ANSI_C },
  { command: "touch${IFS}PWNED", why: "${IFS} as a separator", source: IFS },
  { command: "IFS=,; cmd=touch,PWNED; $cmd", why: "IFS changes word splitting of a variable", source: IFS },
  { command: "{touch,PWNED}", why: "brace expansion builds the command", source: "derived: brace expansion in command position" },
  { command: "X=touch; $X PWNED", why: "variable in command position", source: "derived: variable command name" },
  { command: "$(echo touch) PWNED", why: "substitution in command position", source: "derived: substitution command name" },
  { command: "/???/?ouch PWNED", why: "glob in command position", source: "derived: glob command name" },
  // shell state
  { command: "f() { touch PWNED; }; f", why: "function definition and call", source: "derived: function definition" },
  { command: "ls() { touch PWNED; }; ls", why: "function shadows an allowed command", source: "derived: function shadowing" },
  { command: "shopt -s expand_aliases\nalias ls='touch PWNED'\nls", why: "alias shadows an allowed command", source: "derived: alias shadowing" },
  { command: "trap 'touch PWNED' EXIT", why: "trap runs a command at exit", source: "derived: trap" },
  { command: "echo 'touch PWNED' > ls && chmod +x ls && PATH=.:$PATH ls", why: "PATH assignment selects a planted program", source: "derived: PATH assignment prefix" },
  { command: "coproc touch PWNED", why: "coprocess runs a command", source: "derived: coproc" },
  // plain writers
  { command: "touch PWNED", why: "touch creates a file", source: "derived: plain writer" },
  { command: "cp README.md PWNED", why: "cp writes a file", source: "derived: plain writer" },
  { command: "ln -s README.md PWNED", why: "ln creates a link", source: "derived: plain writer" },
  { command: "mkdir PWNED", why: "mkdir creates a directory", source: "derived: plain writer" },
  { command: "printf 'x' > PWNED", why: "printf output redirected to a file", source: GEMINI_CHAIN_REDIRECT }
]

/** Read-only commands that succeed in a fresh git repository with one commit and `README.md`. */
export const benign: ReadonlyArray<BenignCommand> = [
  { command: "ls", note: "list" },
  { command: "ls -la", note: "long list" },
  { command: "pwd", note: "working directory" },
  { command: "cat README.md", note: "read a file" },
  { command: "cat README.md | wc -l", note: "pipeline of reads" },
  { command: "head -n 5 README.md", note: "head" },
  { command: "tail -n 1 README.md", note: "tail" },
  { command: "wc -c README.md", note: "byte count" },
  { command: "grep -rn foo . || true", note: "search, tolerating no match" },
  { command: "grep -c '' README.md", note: "count lines" },
  { command: "find . -name '*.md' -not -path './.git/*'", note: "find with a quoted glob" },
  { command: "find . -maxdepth 1 -type f", note: "find files" },
  { command: "sed -n '1p' README.md", note: "print the first line" },
  { command: "sed -n '1,3p' README.md", note: "print a range" },
  { command: "sed -n 's/^/> /p' README.md", note: "print-only substitution" },
  { command: "sort README.md | uniq -c", note: "sort and count" },
  { command: "cut -c1-10 README.md", note: "cut" },
  { command: "tr a-z A-Z < README.md", note: "input redirection" },
  { command: "diff README.md README.md", note: "diff identical files" },
  { command: "cmp README.md README.md", note: "compare identical files" },
  { command: "stat README.md", note: "stat" },
  { command: "du -sh .", note: "disk usage" },
  { command: "df -h .", note: "free space" },
  { command: "which git", note: "which" },
  { command: "type ls", note: "type" },
  { command: "basename \"$PWD\"", note: "expansion in an argument" },
  { command: "dirname ./README.md", note: "dirname" },
  { command: "realpath README.md", note: "realpath" },
  { command: "readlink -f README.md", note: "readlink" },
  { command: "date +%Y", note: "date with a format" },
  { command: "whoami", note: "user" },
  { command: "id -u", note: "user id" },
  { command: "uname -s", note: "kernel" },
  { command: "hostname", note: "host name" },
  { command: "true", note: "true" },
  { command: "test -f README.md", note: "test" },
  { command: "[ -d .git ]", note: "bracket test" },
  { command: "nl README.md", note: "number lines" },
  { command: "od -c README.md | head -n 2", note: "octal dump" },
  { command: "md5sum README.md", note: "checksum" },
  { command: "sha256sum README.md", note: "checksum" },
  { command: "echo hello", note: "echo" },
  { command: "printf '%s\\n' hi", note: "printf" },
  { command: "ls 2>/dev/null", note: "stderr to /dev/null" },
  { command: "cat README.md 2>&1 | head -n 1", note: "descriptor duplication" },
  { command: "for f in *.md; do head -n 1 \"$f\"; done", note: "loop over a glob (not wc: a name from the glob could be --files0-from=x.md)" },
  { command: "if [ -f README.md ]; then echo yes; fi", note: "conditional" },
  { command: "echo $(git rev-parse --short HEAD)", note: "read-only substitution" },
  { command: "diff <(cat README.md) README.md", note: "read-only process substitution" },
  { command: "cat <<'EOF'\nhello $(touch nothing)\nEOF", note: "quoted here-document is not expanded" },
  { command: "grep -q . README.md && echo ok", note: "chain of reads" },
  { command: "(ls)", note: "subshell" },
  { command: "{ pwd; ls; }", note: "brace group" },
  { command: "git status", note: "git status" },
  { command: "git status --short", note: "git status short" },
  { command: "git log --oneline -n 1", note: "git log" },
  { command: "git --no-pager log -1 --stat", note: "git log with --no-pager" },
  { command: "git log --format='%H %s' -n 1 | cut -c1-7", note: "git log piped" },
  { command: "git diff", note: "git diff" },
  { command: "git diff HEAD --stat", note: "git diff stat" },
  { command: "git show --stat HEAD", note: "git show" },
  { command: "git branch", note: "git branch list" },
  { command: "git branch -a", note: "git branch all" },
  { command: "git tag -l", note: "git tag list" },
  { command: "git remote -v", note: "git remote list" },
  { command: "git rev-parse HEAD", note: "git rev-parse" },
  { command: "git rev-parse --show-toplevel", note: "git rev-parse toplevel" },
  { command: "git ls-files", note: "git ls-files" },
  { command: "git ls-tree HEAD", note: "git ls-tree" },
  { command: "git cat-file -p HEAD", note: "git cat-file" },
  { command: "git describe --always", note: "git describe" },
  { command: "git shortlog -s -n HEAD", note: "git shortlog with a revision (no stdin)" },
  { command: "git blame README.md", note: "git blame" },
  { command: "git grep -c '' -- README.md", note: "git grep" },
  { command: "git config --get core.bare", note: "git config read" },
  { command: "git config --list", note: "git config list" },
  { command: "git reflog -n 1", note: "git reflog" },
  { command: "git stash list", note: "git stash list" }
]
