import { describe, expect, it } from "@effect/vitest"
import { analyze } from "../../../src/Tools/Shell/Analysis.js"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"

const reasonOf = (command: string): string => {
  const verdict = classifyReadOnly(command)
  if (verdict.readOnly) throw new Error(`expected not read-only: ${command}`)
  return verdict.reason
}

const expectReadOnly = (commands: ReadonlyArray<string>) => {
  for (const command of commands) {
    const verdict = classifyReadOnly(command)
    expect(verdict, command).toEqual({ readOnly: true })
  }
}

const expectNotReadOnly = (commands: ReadonlyArray<string>) => {
  for (const command of commands) expect(classifyReadOnly(command).readOnly, command).toBe(false)
}

describe("classifyReadOnly", () => {
  it("accepts an analysis as well as a string", () => {
    expect(classifyReadOnly(analyze("ls"))).toEqual({ readOnly: true })
  })

  it("names the offending simple command and why", () => {
    expect(reasonOf("ls && find . -delete")).toBe(
      "`find . -delete`: `find -delete` is not known to be read-only (find can run commands, delete and write files)"
    )
    expect(reasonOf("echo $(rm -rf x)")).toMatch(/^`rm -rf x`: `rm` is not on the read-only allowlist/)
    expect(reasonOf("echo 'x")).toMatch(/cannot be analysed: parse error/)
  })

  it("rejects writing redirections and accepts /dev/null and descriptor duplication", () => {
    expectReadOnly([
      "ls 2>/dev/null",
      "ls >/dev/null 2>&1",
      "ls 2>&1 | cat",
      "echo x >&2",
      "ls 2>&-",
      "cat < README.md",
      "cat <<< hi",
      "ls &>/dev/null"
    ])
    expectNotReadOnly([
      "ls > x",
      "ls >> x",
      "ls 2> x",
      "ls &> x",
      "ls >| x",
      "ls >& x",
      "cat <> x",
      "ls {fd}>x",
      "cat < /dev/tcp/example.com/80",
      "ls > $OUT",
      "{ ls; } > x",
      "if true; then ls; fi > x"
    ])
  })

  it("rejects assignments, non-literal, quoted and path-qualified command names", () => {
    expect(reasonOf("FOO=1 ls")).toMatch(/assigns `FOO`/)
    expect(reasonOf("X=1")).toMatch(/assigns a shell variable/)
    expect(reasonOf("$CMD")).toMatch(/not literal/)
    expect(reasonOf("*.sh")).toMatch(/not literal/)
    expect(reasonOf("{ls,-la}")).toMatch(/not literal/)
    expect(reasonOf("\\ls")).toMatch(/quoted or escaped/)
    expect(reasonOf("\"ls\"")).toMatch(/quoted or escaped/)
    expect(reasonOf("$'ls'")).toMatch(/quoted or escaped/)
    expect(reasonOf("/bin/ls")).toMatch(/path-qualified/)
    expect(reasonOf("./ls")).toMatch(/path-qualified/)
  })

  it("rejects interpreters, wrappers and shell-state builtins", () => {
    for (
      const command of [
        "eval ls",
        "exec ls",
        "source x",
        ". x",
        "bash -c ls",
        "sh x",
        "zsh",
        "python3 x.py",
        "python3.12 -V",
        "node x",
        "perl -e 1",
        "ruby x",
        "awk 1 x",
        "gawk 1",
        "xargs ls",
        "env ls",
        "env -i",
        "command ls",
        "builtin echo",
        "timeout 1 ls",
        "nice ls",
        "nohup ls",
        "sudo ls",
        "trap x EXIT",
        "alias a=b",
        "cd - x",
        "pushd /",
        "export A",
        "read x",
        "tee x",
        "rm x",
        "unknown-tool"
      ]
    ) {
      expect(classifyReadOnly(command).readOnly, command).toBe(false)
    }
  })

  it("rejects structural hazards", () => {
    expect(reasonOf("f() { ls; }")).toMatch(/defines the function `f`/)
    expect(reasonOf("ls &")).toMatch(/background/)
    expect(reasonOf("coproc ls")).toMatch(/coprocess/)
    expect(reasonOf("(( x = 1 ))")).toMatch(/\(\( \.\.\. \)\)/)
    expect(reasonOf("echo $((x = 1))")).toMatch(/assigns/)
    expect(reasonOf("for PATH in /tmp; do ls; done")).toMatch(/PATH/)
    expectReadOnly([
      "for f in *.md; do head -n 1 \"$f\"; done",
      "while false; do ls; done",
      "[[ -f x ]] && cat x",
      "time ls",
      "! ls",
      "case x in x) ls;; esac"
    ])
  })

  it("checks find primaries", () => {
    expectReadOnly(["find . -name '*.ts' -type f", "find . -maxdepth 2 -print0", "find . -newer x -ls"])
    for (
      const primary of ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]
    ) {
      expect(classifyReadOnly(`find . ${primary} x \\;`).readOnly, primary).toBe(false)
    }
    expectNotReadOnly(["find . -name *.ts", "find $DIR", "find . -- -delete"])
  })

  it("accepts only print-only sed scripts with -n", () => {
    expectReadOnly([
      "sed -n 1p x",
      "sed -n '1,5p' x",
      "sed -n '$p' x",
      "sed -n '/re/p' x",
      "sed -n '/a/,/b/p' x",
      "sed -n 's/a/b/gp' x",
      "sed -n -e 1p -e 2p x",
      "sed -ne 'p' x",
      "sed --quiet '1~2p' x",
      "sed -n '/x/!p' x",
      "sed -n '\\%a/b%p' x",
      "sed -nE 's|a(b)|\\1|p' x",
      "sed -n '1{p;q}' x",
      "sed -n 'y/abc/xyz/;p' x",
      "sed -n '10,+3p' x",
      "sed -n '=' x"
    ])
    expectNotReadOnly([
      "sed 1p x",
      "sed -n '1w out' x",
      "sed -n '1W out' x",
      "sed -n '1e id' x",
      "sed -n 's/a/b/w out' x",
      "sed -n 's/a/b/e' x",
      "sed -n '1r y' x",
      "sed -i -n 1p x",
      "sed -ni 1p x",
      "sed --in-place -n 1p x",
      "sed -n -f script x",
      "sed -n ':a;p;ba' x",
      "sed -n \"$S\" x",
      "sed -n '1p;1w out' x",
      "sed -n -e p -e 'w out' x",
      "sed -n --expression='w out' x",
      "sed -n --expr=p x"
    ])
  })

  it("checks sort, uniq, rg, tree, file, xxd, base64, date, hostname, printf", () => {
    expectReadOnly([
      "sort x",
      "sort -rn -k2 x",
      "sort -t, -k1 x",
      "uniq x",
      "uniq -c",
      "uniq -f 1 x",
      "rg foo",
      "rg -n foo src",
      "rg -- --pre",
      "tree -L 2",
      "file x",
      "xxd x",
      "xxd -l 16 x",
      "base64 x",
      "date",
      "date +%s",
      "date -u",
      "hostname -f",
      "printf '%s' x"
    ])
    expectNotReadOnly([
      "sort -o y x",
      "sort -oy x",
      "sort -ro y x",
      "sort --output=y x",
      "sort --out=y x",
      "sort --compress-program=gzip x",
      "sort $OPTS x",
      "uniq x y",
      "uniq -c x y",
      "rg --pre cat foo",
      "rg --pre=cat foo",
      "rg -z foo",
      "rg --search-zip foo",
      "rg --hostname-bin=x foo",
      "rg $X foo",
      "rg foo *",
      "tree -o y",
      "tree -R",
      "file -C -m x",
      "xxd -r x",
      "xxd x y",
      "base64 -o y x",
      "date -s 1",
      "date --set=1",
      "date 0101",
      "hostname evil",
      "printf -v x y"
    ])
  })

  it("checks git subcommands and options", () => {
    expectReadOnly([
      "git status",
      "git log -p",
      "git log --oneline -n 5",
      "git diff --stat",
      "git show HEAD:x",
      "git --no-pager log",
      "git -P diff",
      "git branch",
      "git branch -a -v",
      "git branch --list 'f*'",
      "git tag",
      "git tag -l 'v*'",
      "git remote",
      "git remote -v",
      "git remote get-url origin",
      "git config --get x.y",
      "git config -l",
      "git reflog",
      "git reflog show HEAD",
      "git stash list",
      "git ls-files -- $X",
      "git rev-parse --abbrev-ref HEAD",
      "git grep -n foo",
      "git cat-file -t HEAD",
      "git diff --output-indicator-new=+"
    ])
    expectNotReadOnly([
      "git -c a=b status",
      "git --config-env=a=B status",
      "git -C .. status",
      "git --git-dir=x log",
      "git --work-tree=x status",
      "git --exec-path=x status",
      "git -p log",
      "git --paginate log",
      "git --namespace=x log",
      "git diff --output=x",
      "git diff --out=x",
      "git log --ext-diff",
      "git show --textconv",
      "git cat-file --filters HEAD:x",
      "git grep -O foo",
      "git grep --open-files-in-pager=x foo",
      "git branch x",
      "git branch -D x",
      "git tag v1",
      "git tag -d v1",
      "git remote add o u",
      "git config x.y z",
      "git config --edit",
      "git config --unset x.y",
      "git reflog expire",
      "git reflog delete x",
      "git stash",
      "git stash pop",
      "git commit",
      "git push",
      "git checkout x",
      "git log $OPTS",
      "git $SUB",
      "git help log",
      "git constructor"
    ])
  })

  it("requires every nested command to be read-only", () => {
    expectReadOnly(["echo $(git rev-parse HEAD)", "diff <(sort a) <(sort b)", "cat <<EOF\n$(pwd)\nEOF"])
    expectNotReadOnly(["echo $(touch x)", "diff <(touch x) y", "cat <<EOF\n$(touch x)\nEOF", "ls `touch x`"])
  })
})
