import { describe, expect, it } from "@effect/vitest"
import { analyze, literalWords, MAX_COMMAND_LENGTH, MAX_NESTING } from "../../../src/Tools/Shell/Analysis.js"
import type { ParsedShell, ShellAnalysis } from "../../../src/Tools/Shell/Analysis.js"

const parsed = (command: string): ParsedShell => {
  const analysis: ShellAnalysis = analyze(command)
  if (analysis._tag !== "Parsed") throw new Error(`expected Parsed, got: ${analysis.reason}`)
  return analysis
}

const sources = (command: string): ReadonlyArray<string> => parsed(command).commands.map((c) => c.source)

const reason = (command: string): string => {
  const analysis = analyze(command)
  if (analysis._tag !== "Unanalyzable") throw new Error(`expected Unanalyzable for ${command}`)
  return analysis.reason
}

describe("analyze", () => {
  it("splits lists, pipelines and newlines into simple commands", () => {
    expect(sources("a; b && c || d | e & f\ng")).toEqual(["a", "b", "c", "d", "e", "f", "g"])
  })

  it("collects commands inside every kind of substitution and compound command", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["echo $(inner)", "inner"],
      ["echo `inner`", "inner"],
      ["echo \"$(inner)\"", "inner"],
      ["cat <(inner)", "inner"],
      ["tee >(inner)", "inner"],
      ["cat <<EOF\n$(inner)\nEOF", "inner"],
      ["(inner)", "inner"],
      ["{ inner; }", "inner"],
      ["if inner; then :; fi", "inner"],
      ["while inner; do :; done", "inner"],
      ["for x in $(inner); do :; done", "inner"],
      ["case $(inner) in *) :;; esac", "inner"],
      ["f() { inner; }", "inner"],
      ["echo ${x:-$(inner)}", "inner"],
      ["echo $((1 + $(inner)))", "inner"],
      ["[[ -n $(inner) ]]", "inner"],
      ["x=$(inner)", "inner"],
      ["echo `echo \\`inner\\``", "inner"]
    ]
    for (const [command, expected] of cases) {
      expect(sources(command), command).toContain(expected)
    }
  })

  it("does not expand a quoted here-document body", () => {
    expect(sources("cat <<'EOF'\n$(inner)\nEOF")).toEqual(["cat <<'EOF'"])
    expect(parsed("cat <<'EOF'\nx\nEOF").features.expandingHereDocs).toBe(false)
    expect(parsed("cat <<EOF\nx\nEOF").features.expandingHereDocs).toBe(true)
  })

  it("records words after quote removal with their literal status", () => {
    const [command] = parsed("FOO=1 ls -la \"a b\" $HOME *.ts {a,b} \\x $'\\x41'").commands
    expect(command!.assignments.map((a) => [a.name, a.value?.value])).toEqual([["FOO", "1"]])
    expect(command!.words.map((w) => w.value)).toEqual(["ls", "-la", "a b", "$HOME", "*.ts", "{a,b}", "x", "A"])
    expect(command!.words.map((w) => w.literal)).toEqual([true, true, true, false, false, false, true, true])
    expect(command!.words[3]!.expansion).toBe(true)
    expect(command!.words[4]!.glob).toBe(true)
    expect(command!.words[5]!.brace).toBe(true)
    expect(command!.words.map((w) => w.quoted)).toEqual([false, false, true, false, false, false, true, true])
    expect(literalWords(command!)).toBeUndefined()
  })

  it("records redirections with descriptor, operator and target", () => {
    const [command] = parsed("ls > out 2>&1 < in {fd}>x").commands
    expect(command!.redirections.map((r) => [r.fd, r.fdVariable, r.operator, r.target?.value])).toEqual([
      [undefined, undefined, ">", "out"],
      [2, undefined, ">&", "1"],
      [undefined, undefined, "<", "in"],
      [undefined, "fd", ">", "x"]
    ])
  })

  it("records features", () => {
    const features = parsed("f() { :; }; ls & cat <(x) > >(y); coproc z; (( i++ )); [[ a ]]; for p in a; do :; done")
      .features
    expect(features.functionDefinitions).toEqual(["f"])
    expect(features.background).toBe(true)
    expect(features.processSubstitution).toBe(true)
    expect(features.coprocesses).toBe(true)
    expect(features.arithmeticCommands).toBe(true)
    expect(features.testCommands).toBe(true)
    expect(features.loopVariables).toEqual(["p"])
    expect(parsed("{ ls; } > out").features.compoundRedirections.map((r) => r.text)).toEqual(["> out"])
    expect(parsed("echo ${X:=1}").features.assigningExpansions).toBe(true)
    expect(parsed("echo $((i += 1))").features.assigningExpansions).toBe(true)
    expect(parsed("echo $((i <= 1)) ${X:-1}").features.assigningExpansions).toBe(false)
  })

  it("marks commands inside substitutions and function bodies", () => {
    const commands = parsed("echo $(a); f() { b; }").commands
    expect(commands.map((c) => [c.source, c.inSubstitution, c.inFunction])).toEqual([
      ["echo $(a)", false, false],
      ["a", true, false],
      ["b", false, true]
    ])
  })

  it("reports parse errors at any depth", () => {
    expect(reason("echo 'unterminated")).toMatch(/parse error/)
    expect(reason("echo $(ls")).toMatch(/parse error/)
    expect(reason("echo \"$(if; then)\"")).toMatch(/parse error/)
    expect(reason("ls )")).toMatch(/parse error/)
    expect(reason("ls &&")).toMatch(/parse error/)
  })

  it("refuses commands that are too long or nested too deeply", () => {
    expect(reason("x".repeat(MAX_COMMAND_LENGTH + 1))).toMatch(/characters long/)
    expect(analyze("x".repeat(MAX_COMMAND_LENGTH))._tag).toBe("Parsed")
    const nested = (depth: number) => "echo " + "$(echo ".repeat(depth) + "x" + ")".repeat(depth)
    expect(analyze(nested(MAX_NESTING - 1))._tag).toBe("Parsed")
    expect(reason(nested(MAX_NESTING + 1))).toMatch(/nested deeper/)
    expect(reason("( ".repeat(30) + "ls" + " )".repeat(30))).toMatch(/nested deeper/)
    expect(reason("echo $((1" + "+1".repeat(400) + "))")).toMatch(/deeper than/)
  })

  it("analyses the empty command as no commands", () => {
    expect(parsed("").commands).toEqual([])
    expect(parsed("# just a comment").commands).toEqual([])
  })
})
