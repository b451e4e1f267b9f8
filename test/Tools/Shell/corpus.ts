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
  {
    command: "echo ok # harmless\ntouch PWNED",
    why: "a comment hides nothing after the newline",
    source: "derived: comment then newline"
  },
  { command: "ls & touch PWNED", why: "`&` backgrounds the read and runs the write", source: CC_CHAINING },
  { command: "git status; touch PWNED", why: "allowed git read chained with a write", source: CC_GIT_ADD_CHAIN },
  {
    command: "git log --oneline -1 && touch PWNED",
    why: "allowed git read chained with a write",
    source: CC_GIT_ADD_CHAIN
  },
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
  {
    command: "echo ${X:-$(touch PWNED)}",
    why: "substitution inside a parameter default",
    source: "derived: parameter expansion operand"
  },
  {
    command: "echo $(( $(touch PWNED)1 ))",
    why: "substitution inside arithmetic",
    source: "derived: arithmetic expansion"
  },
  { command: "[[ -n $(touch PWNED) ]]", why: "substitution inside [[ ]]", source: "derived: test command" },
  { command: "case $(touch PWNED) in *) ls;; esac", why: "substitution in a case word", source: "derived: case word" },
  {
    command: "for f in $(touch PWNED); do ls; done",
    why: "substitution in a for word list",
    source: "derived: for word list"
  },
  { command: "cat <(touch PWNED)", why: "input process substitution runs a command", source: GEMINI_PROCSUB },
  { command: "echo x >(touch PWNED)", why: "output process substitution runs a command", source: GEMINI_PROCSUB },
  {
    command: "diff <(touch PWNED) README.md",
    why: "process substitution in an allowed command",
    source: GEMINI_PROCSUB
  },
  {
    command: "cat <<EOF\n$(touch PWNED)\nEOF",
    why: "an unquoted here-document body is expanded",
    source: "derived: unquoted here-document"
  },
  { command: "cat <<< \"$(touch PWNED)\"", why: "a here-string is expanded", source: "derived: here-string" },
  {
    command: "echo ${X:=$(touch PWNED)}",
    why: "assigning expansion with a substitution",
    source: "derived: ${X:=...}"
  },
  // find
  { command: "find . -name README.md -exec touch PWNED \\;", why: "find -exec runs a command", source: CODEX_FIND },
  {
    command: "find . -name README.md -exec touch PWNED {} +",
    why: "find -exec ... {} + runs a command",
    source: FIND_EXEC_PLUS
  },
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
  {
    command: "printf 'touch PWNED\\n%.0s' $(seq 1 2000) | sort -S 1b --compress-program=sh",
    why: "sort runs the compress program",
    source: SORT_COMPRESS_RG_PRE
  },
  { command: "uniq README.md PWNED", why: "uniq's second operand is an output file", source: SORT_UNIQ },
  {
    command: "xxd README.md PWNED",
    why: "xxd's second operand is an output file",
    source: "derived: xxd outfile operand"
  },
  {
    command: "tree -o PWNED",
    why: "tree -o writes a file",
    source:
      "bigduu/Bamboo-agent#76 \"read-only Bash command allowlist\" (sort -o/tree -o, uniq out-arg) https://github.com/bigduu/Bamboo-agent/pull/76"
  },
  {
    command: "echo 'touch PWNED' > pwn.sh && chmod +x pwn.sh && rg --pre ./pwn.sh . README.md",
    why: "rg --pre runs a preprocessor program",
    source: RG_PRE
  },
  {
    command: "date --set=not-a-date 2>/dev/null || touch PWNED",
    why: "date --set sets the clock (an unparsable date, so running it changes nothing)",
    source:
      "Tracer-Cloud/opensre#5840 review (date/hostname/sort/rg read-only checks) https://github.com/Tracer-Cloud/opensre/pull/5840"
  },
  // git
  {
    command: "git -c core.fsmonitor='touch PWNED' status",
    why: "git -c sets a hook that status runs",
    source: GIT_FSMONITOR
  },
  {
    command: "git -c core.pager='touch PWNED' log",
    why: "git -c sets the pager (runs when stdout is a terminal)",
    source: CODEX_GIT_GLOBALS
  },
  {
    command: "git -p -c core.pager='touch PWNED' log -1",
    why: "git -p forces the pager (runs when stdout is a terminal)",
    source: CODEX_GIT_PAGINATE
  },
  {
    command: "git -C . -c core.fsmonitor='touch PWNED' status",
    why: "-C and -c global options",
    source: CODEX_GIT_GLOBALS
  },
  { command: "git -c alias.st='!touch PWNED' st", why: "a shell alias runs a command", source: GIT_FSMONITOR },
  {
    command: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch PWNED' git status",
    why: "configuration through environment assignments",
    source: "derived: GIT_CONFIG_* environment"
  },
  { command: "git diff --output=PWNED", why: "git diff --output writes a file", source: GIT_DIFF_OUTPUT },
  { command: "git log -1 --output=PWNED", why: "git log --output writes a file", source: GIT_DIFF_OUTPUT },
  { command: "git show --output=PWNED HEAD", why: "git show --output writes a file", source: GIT_DIFF_OUTPUT },
  {
    command: "git grep --open-files-in='touch PWNED' -e .",
    why: "git parse-options accepts abbreviated long options (`--open-files-in-pager`)",
    source: "derived: git parse-options abbreviation"
  },
  {
    command: "git -c diff.external='touch PWNED' log -1 -p --ext-diff",
    why: "--ext-diff runs the external diff program",
    source: GIT_GREP_PAGER
  },
  {
    command: "GIT_EXTERNAL_DIFF='touch PWNED' git log -1 -p --ext-diff",
    why: "external diff from the environment",
    source: GIT_GREP_PAGER
  },
  {
    command: "git grep --open-files-in-pager='touch PWNED' -e .",
    why: "git grep -O runs a pager program",
    source: GIT_GREP_PAGER
  },
  {
    command: "git config core.fsmonitor 'touch PWNED' && git status",
    why: "git config writes configuration that runs code",
    source: GIT_FSMONITOR
  },
  // redirections
  { command: "ls > PWNED", why: "output redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls >> PWNED", why: "append redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls &> PWNED", why: "&> writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls 2> PWNED", why: "stderr redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls >| PWNED", why: "clobbering redirection writes a file", source: GEMINI_CHAIN_REDIRECT },
  { command: "ls >& PWNED", why: ">&word writes a file", source: "derived: >&file" },
  { command: "ls 1>PWNED 2>&1", why: "fd 1 redirected to a file", source: GEMINI_CHAIN_REDIRECT },
  {
    command: "cat <> PWNED",
    why: "<> opens (and creates) a file for writing",
    source: "derived: read-write redirection"
  },
  {
    command: "ls {fd}>PWNED",
    why: "a descriptor-variable redirection writes a file",
    source: "derived: {fd}> redirection"
  },
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
  {
    command: "awk 'BEGIN { system(\"touch PWNED\") }'",
    why: "awk system() runs a command",
    source: "derived: awk system()"
  },
  {
    command: "awk 'BEGIN { print \"x\" > \"PWNED\" }'",
    why: "awk print > writes a file",
    source: "derived: awk redirection"
  },
  {
    command: "python3 -c 'open(\"PWNED\", \"w\")'",
    why: "an interpreter writes a file",
    source: "derived: interpreter"
  },
  {
    command: "node -e 'require(\"fs\").writeFileSync(\"PWNED\", \"\")'",
    why: "an interpreter writes a file",
    source: "derived: interpreter"
  },
  {
    command: "perl -e 'open(my $f, \">\", \"PWNED\")'",
    why: "an interpreter writes a file",
    source: "derived: interpreter"
  },
  // obfuscated command names
  { command: "\\touch PWNED", why: "escaped command name", source: SUBST_AND_WRAPPERS },
  { command: "\"touch\" PWNED", why: "quoted command name", source: "derived: quoted command name" },
  { command: "t'ou'ch PWNED", why: "quotes split inside the command name", source: "derived: quote splitting" },
  { command: "/usr/bin/touch PWNED", why: "path-qualified command", source: "derived: path-qualified command" },
  { command: "$'\\x74ouch' PWNED", why: "ANSI-C hex escapes in the command name", source: ANSI_C },
  { command: "$'\\164\\157\\165\\143\\150' PWNED", why: "ANSI-C octal escapes in the command name", source: ANSI_C },
  { command: "touch${IFS}PWNED", why: "${IFS} as a separator", source: IFS },
  { command: "IFS=,; cmd=touch,PWNED; $cmd", why: "IFS changes word splitting of a variable", source: IFS },
  {
    command: "{touch,PWNED}",
    why: "brace expansion builds the command",
    source: "derived: brace expansion in command position"
  },
  { command: "X=touch; $X PWNED", why: "variable in command position", source: "derived: variable command name" },
  {
    command: "$(echo touch) PWNED",
    why: "substitution in command position",
    source: "derived: substitution command name"
  },
  { command: "/???/?ouch PWNED", why: "glob in command position", source: "derived: glob command name" },
  // shell state
  { command: "f() { touch PWNED; }; f", why: "function definition and call", source: "derived: function definition" },
  {
    command: "ls() { touch PWNED; }; ls",
    why: "function shadows an allowed command",
    source: "derived: function shadowing"
  },
  {
    command: "shopt -s expand_aliases\nalias ls='touch PWNED'\nls",
    why: "alias shadows an allowed command",
    source: "derived: alias shadowing"
  },
  { command: "trap 'touch PWNED' EXIT", why: "trap runs a command at exit", source: "derived: trap" },
  {
    command: "echo 'touch PWNED' > ls && chmod +x ls && PATH=.:$PATH ls",
    why: "PATH assignment selects a planted program",
    source: "derived: PATH assignment prefix"
  },
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
  {
    command: "for f in *.md; do head -n 1 \"$f\"; done",
    note: "loop over a glob (not wc: a name from the glob could be --files0-from=x.md)"
  },
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

// ---------------------------------------------------------------------------------------------------------------
// The hardening classes (issue 15): each hostile entry creates `./PWNED` (or another file) when it runs, each benign
// entry runs without asking. Checked by classification in `corpus.test.ts` and end to end in
// `test/Tools/Bash/corpus.classes.e2e.test.ts`.
// ---------------------------------------------------------------------------------------------------------------

const SECOND_EVAL =
  "derived: bash evaluates a subscript or arithmetic text a second time (bash(1), ARITHMETIC EVALUATION)"
const OPTION_LIST =
  "derived: an option not on the command's read-only list (getopt_long abbreviations, GNU permutation)"

/** Class 1, second evaluation: never read-only (each runs `touch PWNED` in bash 5). */
export const secondEvaluationHostile: ReadonlyArray<HostileCommand> = [
  { command: "test -v 'a[$(touch PWNED)]'", why: "test -v evaluates the subscript", source: SECOND_EVAL },
  { command: "[ -v 'a[$(touch PWNED)]' ]", why: "[ -v evaluates the subscript", source: SECOND_EVAL },
  { command: "[[ -v 'a[$(touch PWNED)]' ]]", why: "[[ -v evaluates the subscript", source: SECOND_EVAL },
  {
    command: "for x in 'a[$(touch PWNED)]'; do echo $((x)); done",
    why: "a loop variable's text evaluated as arithmetic",
    source: SECOND_EVAL
  },
  {
    command: "echo 'a[$(touch PWNED)]' >/dev/null; echo $(($_))",
    why: "`$_` carries the previous argument into arithmetic",
    source: SECOND_EVAL
  },
  {
    command: "for x in 'a[$(touch PWNED)]'; do echo $[x]; done",
    why: "the old `$[ ]` arithmetic",
    source: SECOND_EVAL
  },
  {
    command: "for x in 'a[$(touch PWNED)]'; do [[ $x -eq 0 ]]; done",
    why: "[[ -eq ]] evaluates its operands",
    source: SECOND_EVAL
  },
  { command: "[[ 'a[$(touch PWNED)]' -eq 0 ]]", why: "[[ -eq ]] evaluates a quoted operand", source: SECOND_EVAL },
  {
    command: "for x in 'a[$(touch PWNED)]'; do echo ${!x}; done",
    why: "indirect expansion evaluates the named subscript",
    source: SECOND_EVAL
  },
  {
    command: "for p in '$(touch PWNED)'; do echo ${p@P}; done",
    why: "prompt expansion runs substitutions in the value",
    source: SECOND_EVAL
  },
  {
    command: "for x in 'a[$(touch PWNED)]'; do echo ${PWD:x}; done",
    why: "substring offsets are arithmetic",
    source: SECOND_EVAL
  },
  {
    command: "for i in 'a[$(touch PWNED)]'; do echo ${BASH_VERSINFO[i]}; done",
    why: "array subscripts are arithmetic",
    source: SECOND_EVAL
  },
  {
    command: "[[ x =~ (.*) ]] && echo 'a[$(touch PWNED)]' >/dev/null && echo ${PWD:0:$_}",
    why: "substring length from `$_`",
    source: SECOND_EVAL
  }
]

/** Class 1, benign: arithmetic and tests over literal numbers and names stay read-only. */
export const secondEvaluationBenign: ReadonlyArray<BenignCommand> = [
  { command: "echo $((1 + 2 * 3))", note: "literal arithmetic" },
  { command: "echo $[6 / 2]", note: "old-style literal arithmetic" },
  { command: "echo $((RANDOM % 6 + 1))", note: "a shell-kept numeric variable" },
  { command: "[[ 3 -gt 2 ]] && echo yes", note: "numeric test on literals" },
  { command: "test 1 -eq 1", note: "test with literal numbers" },
  { command: "[ -v HOME ] && echo set", note: "-v with a plain name" },
  { command: "[[ -v PATH ]]", note: "[[ -v with a plain name" },
  { command: "echo ${PWD:0:4}", note: "substring with literal offsets" },
  { command: "echo ${#PWD}", note: "length of a variable" },
  { command: "for n in 1 2 3; do echo $n; done", note: "a loop printing its words" },
  { command: "echo ${BASH_VERSINFO[0]}", note: "a literal subscript" }
]

/** Class 2, options by positive list: never read-only (each writes a file when it runs). */
export const optionHostile: ReadonlyArray<HostileCommand> = [
  { command: "xxd -c 4 README.md PWNED", why: "xxd's second operand is its output file", source: OPTION_LIST },
  {
    command: "xxd README.md -PWNED",
    why: "xxd stops reading options at its first operand: `-PWNED` is the output file",
    source: "issue 15: `xxd README.md -X` wrote `-X`"
  },
  { command: "sort --outp=PWNED README.md", why: "getopt_long abbreviation of --output", source: OPTION_LIST },
  { command: "sort README.md -o PWNED", why: "GNU permutes: -o after the operand still counts", source: OPTION_LIST },
  { command: "sort -muo PWNED README.md", why: "-o inside a cluster of flags", source: OPTION_LIST },
  { command: "sort -k1 README.md -oPWNED", why: "an attached -o after the operand", source: OPTION_LIST },
  {
    command: "cat README.md | sort -T . -o PWNED",
    why: "sort -T writes temporary files, -o the output",
    source: OPTION_LIST
  },
  { command: "uniq -c README.md PWNED", why: "uniq's second operand is its output file", source: OPTION_LIST },
  { command: "git show --output PWNED HEAD", why: "git show --output with a separate value", source: GIT_DIFF_OUTPUT },
  { command: "git diff --output=PWNED HEAD", why: "git diff --output", source: GIT_DIFF_OUTPUT },
  { command: "git format-patch -1 -o PWNED", why: "format-patch writes patch files", source: OPTION_LIST },
  {
    command: "tail -n1 README.md --pid=1 >/dev/null; sort README.md --output=PWNED",
    why: "a later command with --output",
    source: OPTION_LIST
  },
  {
    command: "ls --hyperlink=always >/dev/null && sort --output PWNED README.md",
    why: "--output with a separate value",
    source: OPTION_LIST
  }
]

/** Class 2, benign: read-only options, globs and loops over the real directory, the benign list. */
export const optionBenign: ReadonlyArray<BenignCommand> = [
  { command: "wc -l *.md", note: "a glob no entry of which looks like an option" },
  { command: "du -sh *", note: "every entry of the directory" },
  { command: "sort *.md", note: "sort over a glob" },
  { command: "for f in *.md; do wc -l \"$f\"; done", note: "a loop over a glob" },
  { command: "node --version", note: "a version query" },
  { command: "git config user.name", note: "git config reading one key" },
  { command: "cd . && ls", note: "cd inside the workspace" },
  { command: "env | grep -c PATH", note: "env without arguments prints the environment" },
  { command: "sort -r -k1 README.md", note: "read-only sort options" },
  { command: "head -3 README.md", note: "head's numeric option" },
  { command: "xxd -l 16 README.md", note: "xxd with one operand" },
  { command: "git log --oneline --stat -1", note: "git log's read-only options" },
  { command: "ls -la --color=never *.md", note: "ls options with a glob" },
  { command: "grep -n --color=never Demo *.md", note: "grep over a glob" }
]

/**
 * Class 2 with a planted directory entry: a glob that meets a file whose name is an option is not read-only. The
 * e2e test creates `files` first.
 */
export const plantedOptionHostile: ReadonlyArray<HostileCommand & { readonly files: ReadonlyArray<string> }> = [
  {
    command: "sort *",
    files: ["-oPWNED"],
    why: "a file named `-oPWNED` becomes sort's -o",
    source: "derived: a glob expanding to an option"
  },
  {
    command: "wc -l *",
    files: ["--files0-from=list"],
    why: "a file named like an option that reads a list of files",
    source: "second review: a file named --files0-from=x"
  },
  {
    command: "for f in *; do sort \"$f\" README.md; done",
    files: ["-oPWNED"],
    why: "a loop variable from a glob meeting an option-like name",
    source: "derived: glob through a loop variable"
  },
  {
    command: "du -sh *",
    files: ["--files0-from=list"],
    why: "du reads the list",
    source: "second review: a file named --files0-from=x"
  }
]

/** Class 3, wrappers and interpreters against the deny rule `Bash(touch:*)` (run in bypassPermissions mode). */
export const wrapperHostile: ReadonlyArray<HostileCommand> = [
  {
    command: "env --split='touch PWNED'",
    why: "GNU abbreviation of --split-string",
    source: "issue 15: `env --split='touch X'` dodged `Bash(touch:*)`"
  },
  { command: "env -S 'touch PWNED'", why: "env -S splits a command", source: CC_WRAPPERS },
  { command: "env -C . touch PWNED", why: "env --chdir takes a value", source: CC_WRAPPERS },
  { command: "env -u HOME touch PWNED", why: "env -u takes a value", source: CC_WRAPPERS },
  {
    command: "timeout --sig=KILL 5 touch PWNED",
    why: "abbreviated --signal takes a value",
    source: "issue 15: `--sig` for `--signal`"
  },
  { command: "timeout -k 1 5 touch PWNED", why: "timeout -k takes a value, then the duration", source: XARGS_TIMEOUT },
  { command: "nice --adj=1 touch PWNED", why: "abbreviated --adjustment", source: SUBST_AND_WRAPPERS },
  { command: "stdbuf --out=L touch PWNED", why: "abbreviated --output", source: SUBST_AND_WRAPPERS },
  { command: "setsid -w touch PWNED", why: "setsid runs a command", source: CC_WRAPPERS },
  { command: "flock . touch PWNED", why: "flock FILE COMMAND", source: CC_WRAPPERS },
  { command: "flock . -c 'touch PWNED'", why: "flock FILE -c TEXT", source: CC_WRAPPERS },
  { command: "taskset 1 touch PWNED", why: "taskset MASK COMMAND", source: CC_WRAPPERS },
  { command: "ionice -c 3 touch PWNED", why: "ionice runs a command", source: CC_WRAPPERS },
  { command: "prlimit --nofile=100 touch PWNED", why: "prlimit runs a command", source: CC_WRAPPERS },
  { command: "script -qc 'touch PWNED' /dev/null", why: "script -c runs shell text", source: CC_WRAPPERS },
  { command: "echo PWNED | xargs -I{} touch {}", why: "xargs fills in the arguments", source: XARGS_TIMEOUT },
  {
    command: "/usr/bin/touch PWNED",
    why: "an absolute path to the denied program",
    source: "issue 15: absolute paths"
  },
  { command: "command -p touch PWNED", why: "command -p runs the program", source: CC_WRAPPERS },
  { command: "builtin eval 'touch PWNED'", why: "eval through builtin", source: CC_WRAPPERS },
  {
    command: "echo 'touch PWNED' | bash",
    why: "a shell fed code on standard input",
    source: "issue 15: interpreters fed code from stdin"
  },
  {
    command: "bash <<'EOF'\ntouch PWNED\nEOF",
    why: "a shell fed a here-document",
    source: "issue 15: interpreters fed a here-document"
  },
  { command: "bash -c -- 'touch PWNED'", why: "`-c --` then the text", source: "issue 15: `-c --`" },
  {
    command: "python3 -c 'import os; os.system(\"touch PWNED\")'",
    why: "an interpreter's inline code",
    source: "issue 15: interpreters"
  },
  { command: "source /dev/stdin <<< 'touch PWNED'", why: "source of standard input", source: "issue 15: source" },
  { command: "trap 'touch PWNED' EXIT", why: "trap runs text at exit", source: "issue 15: trap" },
  {
    command: "x=touch; $x PWNED",
    why: "the command name only known at run time",
    source: "derived: variable command name"
  },
  { command: "awk 'BEGIN { system(\"touch PWNED\") }'", why: "awk's system()", source: "derived: awk system()" },
  { command: "sed -n '1e touch PWNED' README.md", why: "GNU sed's e command", source: SED_E },
  { command: "git -c alias.t='!touch PWNED' t", why: "a git alias that runs a shell command", source: GIT_FSMONITOR },
  { command: "find . -maxdepth 0 -exec touch PWNED \\;", why: "find -exec", source: CODEX_FIND }
]

/** Class 3, benign under the same deny rule: wrappers around other commands run. */
export const wrapperBenign: ReadonlyArray<BenignCommand> = [
  { command: "timeout 5 git status --short", note: "timeout around git" },
  { command: "env ls", note: "env running ls" },
  { command: "nice -n 1 ls", note: "nice" },
  { command: "stdbuf -oL ls", note: "stdbuf" },
  { command: "env -i LANG=C ls", note: "env with a clean environment" },
  { command: "bash -c 'ls'", note: "a shell running literal text" },
  { command: "sh -c 'echo hi'", note: "sh -c" },
  { command: "find . -name README.md -exec cat {} \\;", note: "find -exec cat" },
  { command: "xargs echo < README.md", note: "xargs echo" },
  { command: "command -v git", note: "command -v only looks up" },
  { command: "git -C . status --short", note: "git's -C" },
  { command: "python3 --version", note: "an interpreter's version" }
]

/** Class 4, allow rules do not grant known-dangerous forms (each would write a file). */
export const allowHostile: ReadonlyArray<HostileCommand> = [
  {
    command: "git log -1 --output=PWNED",
    why: "`Bash(git log:*)` is not `--output`",
    source: "issue 15: `Bash(git log:*)` allows git log, not `git log --output=X`"
  },
  { command: "git show --output=PWNED HEAD", why: "`Bash(git show:*)` is not `--output`", source: GIT_DIFF_OUTPUT },
  { command: "git diff --output=PWNED HEAD", why: "`Bash(git diff:*)` is not `--output`", source: GIT_DIFF_OUTPUT },
  {
    command: "npm test --script-shell=./pwn.sh",
    why: "`Bash(npm test:*)` is not `--script-shell`",
    source: "issue 15: `--script-shell=./x`"
  },
  {
    command: "npm test --script-sh ./pwn.sh",
    why: "an abbreviation of --script-shell",
    source: "derived: nopt abbreviations"
  },
  {
    command: "npm run build --script-shell=./pwn.sh",
    why: "`Bash(npm run:*)` is not `--script-shell`",
    source: "issue 15: `--script-shell=./x`"
  },
  {
    command: "git -c core.fsmonitor='touch PWNED' status main",
    why: "`Bash(git * main)` is not `-c core.fsmonitor`",
    source: "issue 15: `Bash(git * main)`"
  },
  {
    command: "git -c alias.x='!touch PWNED' x main",
    why: "`Bash(git * main)` is not `-c alias`",
    source: GIT_FSMONITOR
  },
  { command: "find . -maxdepth 0 -exec touch PWNED \\;", why: "`Bash(find:*)` is not `-exec`", source: CODEX_FIND },
  { command: "find . -maxdepth 0 -fprint PWNED", why: "`Bash(find:*)` is not `-fprint`", source: CODEX_FIND },
  { command: "sort --outp=PWNED README.md", why: "`Bash(sort:*)` is not `--output`, abbreviated", source: SORT_UNIQ },
  { command: "sort -o PWNED README.md", why: "`Bash(sort:*)` is not `-o`", source: SORT_UNIQ },
  {
    command: "for o in --output=PWNED; do git log -1 $o; done",
    why: "a word that expands to a dangerous option",
    source: "derived: option through a loop variable"
  }
]

/** Class 4, benign: what the same allow rules do allow. */
export const allowBenign: ReadonlyArray<BenignCommand> = [
  { command: "git log --oneline -1", note: "git log" },
  { command: "git show --stat HEAD", note: "git show" },
  { command: "git diff --stat HEAD", note: "git diff" },
  { command: "npm test", note: "npm test" },
  { command: "npm test --silent", note: "an npm option that is not dangerous" },
  { command: "npm run build", note: "npm run" },
  { command: "git diff main", note: "`git * main`" },
  { command: "find . -name README.md", note: "find" },
  { command: "sort -r README.md", note: "sort" },
  { command: "git log -1 --format=%s", note: "git log with a format" },
  { command: "timeout 10 npm test", note: "a wrapper the rule looks through" }
]

/** Class 5, reads stay inside: each would print `TOPSECRET` from outside the workspace (through `link`). */
export const outsideReads: ReadonlyArray<HostileCommand> = [
  {
    command: "grep -R TOPSECRET .",
    why: "grep -R follows the symlink while recursing",
    source: "issue 15: recursion that follows symlinks"
  },
  {
    command: "grep --dereference-recursive TOPSECRET .",
    why: "the long form of -R",
    source: "issue 15: recursion that follows symlinks"
  },
  { command: "ls -LR", why: "ls -LR lists through the symlink", source: "issue 15: `ls -LR`" },
  { command: "find -L . -name '*TOPSECRET*'", why: "find -L walks through the symlink", source: "issue 15: `find -L`" },
  { command: "find . -follow -name '*TOPSECRET*'", why: "-follow is -L", source: "issue 15: `find -L`" },
  { command: "diff -r empty link", why: "diff -r follows symlinks", source: "issue 15: `diff -r`" },
  { command: "du -aL link", why: "du -L follows", source: "derived: du -L" },
  { command: "sha256sum -c list.sha", why: "the list names an outside file", source: "issue 15: `sha256sum -c LIST`" },
  {
    command: "jq -n 'import \"data\" as $d; $d' -L link",
    why: "jq loads a module by name",
    source: "issue 15: `jq 'import ...'`"
  },
  { command: "cd link && cat TOPSECRET.txt", why: "cd through the symlink", source: "issue 15: a rebound `$PWD`" },
  {
    command: "for PWD in link; do cat $PWD/TOPSECRET.txt; done",
    why: "a loop rebinds PWD",
    source: "issue 15: a rebound `$PWD`"
  },
  { command: "head -n1 */TOPSECRET.txt", why: "a glob through the symlink", source: "review: globs through symlinks" },
  { command: "cat link/TOPSECRET.txt", why: "a path through the symlink", source: "derived: symlink" }
]

/** Class 5, benign: reads that stay inside the workspace. */
export const insideReads: ReadonlyArray<BenignCommand> = [
  { command: "grep -r Demo .", note: "grep -r does not follow symlinks met while recursing" },
  { command: "ls -R", note: "ls -R does not follow them" },
  { command: "find . -name README.md", note: "find does not follow them" },
  { command: "du -a .", note: "du lists the link, not its target" },
  { command: "sha256sum README.md", note: "a checksum of a file inside" },
  { command: "jq -n '1 + 1'", note: "jq without modules" },
  { command: "cd . && cat README.md", note: "cd inside, then a read" },
  { command: "for f in *.md; do cat \"$f\"; done", note: "a loop over a glob inside" },
  { command: "cat \"$PWD/README.md\"", note: "$PWD is the working directory" },
  { command: "ls -la", note: "a listing shows the link, not the target's content" },
  { command: "git grep Demo", note: "git grep" }
]

/** issue 17.4: in acceptEdits mode, simple file commands inside the workspace run without asking. */
export const acceptEditsBenign: ReadonlyArray<BenignCommand> = [
  { command: "mkdir -p made/deeper", note: "mkdir -p" },
  { command: "touch made/new.txt", note: "touch a new file" },
  { command: "cp README.md made/copy.md", note: "cp into a directory" },
  { command: "mv made/copy.md made/moved.md", note: "mv inside" },
  { command: "mkdir other && touch other/a.txt", note: "two file commands" },
  { command: "cp -r made made2", note: "cp -r" },
  { command: "touch 'quoted name.txt'", note: "a quoted name" },
  { command: "mv -t made 'quoted name.txt'", note: "mv -t" },
  { command: "touch *.md", note: "a glob of files inside" },
  { command: "mkdir -p x && ls x", note: "a file command and a read" }
]

/** issue 17.4: anything else still asks in acceptEdits mode (and a denying approver refuses). */
export const acceptEditsHostile: ReadonlyArray<HostileCommand> = [
  { command: "touch link/PWNED", why: "through a symlink to outside", source: "issue 17.4: every path inside" },
  { command: "mkdir ../PWNED", why: "`..` leaves the workspace", source: "issue 17.4" },
  { command: "cp link/TOPSECRET.txt PWNED", why: "a source outside", source: "issue 17.4" },
  { command: "mv README.md link/PWNED", why: "a destination outside", source: "issue 17.4" },
  { command: "touch ~/PWNED", why: "the home directory", source: "issue 17.4" },
  { command: "touch .git/PWNED", why: "a protected directory asks (safety check)", source: "safety checks" },
  {
    command: "touch PWNED; rm README.md",
    why: "rm is not a simple file command",
    source: "issue 17.4: anything else still asks"
  },
  { command: "cp -L README.md PWNED", why: "cp -L is not on the list", source: "issue 17.4" },
  { command: "touch PWNED > log", why: "a writing redirection", source: "issue 17.4" },
  { command: "ln -s README.md PWNED", why: "ln is not a simple file command", source: "issue 17.4" },
  { command: "touch $(echo PWNED)", why: "a word only known when it runs", source: "issue 17.4" }
]

/** The allow rules class 4 runs under. */
export const allowRules: ReadonlyArray<string> = [
  "git log:*",
  "git show:*",
  "git diff:*",
  "npm test:*",
  "npm run:*",
  "git * main",
  "find:*",
  "sort:*"
]
