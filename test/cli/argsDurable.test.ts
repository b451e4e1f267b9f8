/**
 * `--durable` is taken only where it does something: `exec` with `--session`. Elsewhere it is a usage error that says
 * why, never a flag parsed and ignored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseCommandLine } from "../../src/cli/args.js"

const session = () => fs.mkdtempSync(path.join(os.tmpdir(), "args-durable-"))
const usageOf = (argv: ReadonlyArray<string>) => {
  const parsed = parseCommandLine(argv)
  return Either.isLeft(parsed) ? parsed.left.message : undefined
}

describe("--durable", () => {
  it("exec with --session takes it, sqlite by default", () => {
    const parsed = parseCommandLine(["exec", "--session", session(), "--durable"])
    expect(Either.isRight(parsed) && parsed.right._tag === "Exec" && parsed.right.options.durable).toBe("sqlite")
  })
  it("serve refuses it", () => {
    expect(usageOf(["serve", "--session", session(), "--durable"])).toContain(
      "--durable is for exec only: serve does not run durable turns yet"
    )
  })
  it("exec without --session refuses it", () => {
    expect(usageOf(["exec", "--durable"])).toContain("--durable needs --session DIR: the durable turns are kept there")
  })
  it("an unknown store is refused by name", () => {
    expect(usageOf(["exec", "--session", session(), "--durable=postgres://x"])).toContain(
      "--durable takes sqlite (the default), got postgres://x"
    )
  })
})
