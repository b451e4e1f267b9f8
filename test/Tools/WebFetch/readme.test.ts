/**
 * The README's WebFetch section shows examples/webfetch.ts verbatim; its defaults are the tool's own, and the
 * example runs against a real server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { defaults, fetchPage, runtime } from "../../../examples/webfetch.js"
import { DEFAULT_MAX_CHARS } from "../../../src/Tools/Web/PageReader.js"
import { defaults as toolDefaults } from "../../../src/Tools/WebFetch.js"
import { serve } from "./helpers.js"

const root = path.join(__dirname, "..", "..", "..")

describe("README: WebFetch", () => {
  it("shows examples/webfetch.ts verbatim", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("## WebFetch"))
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
    expect(block).toBe(fs.readFileSync(path.join(root, "examples", "webfetch.ts"), "utf8"))
  })

  it("lists the tool's real defaults", () => {
    expect(defaults.allowPrivate).toEqual([])
    expect(defaults.plainHttp).toEqual([])
    expect(defaults.maxBodyBytes).toBe(toolDefaults.maxBodyBytes)
    expect(defaults.maxDecodedBytes).toBe(toolDefaults.maxDecodedBytes)
    expect(defaults.maxHtmlChars).toBe(toolDefaults.maxHtmlChars)
    expect(Duration.decode(defaults.timeout!)).toEqual(toolDefaults.timeout)
    expect(Duration.decode(defaults.idleTimeout!)).toEqual(toolDefaults.idleTimeout)
    expect(defaults.maxRedirects).toBe(toolDefaults.maxRedirects)
    expect(Duration.decode(defaults.cacheTtl!)).toEqual(toolDefaults.cacheTtl)
    expect(defaults.cacheBytes).toBe(toolDefaults.cacheBytes)
    expect(DEFAULT_MAX_CHARS).toBe(100_000)
  })

  it.scopedLive("the example runs: with 127.0.0.1 allowed and plain, a page comes back headed by the prompt", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end("<h1>Docs</h1><p>Install with npm.</p>")
      })
      const result = yield* fetchPage(server.url("/docs"), "How do I install it?").pipe(
        Effect.provide(runtime({ ...defaults, allowPrivate: ["127.0.0.1"], plainHttp: ["127.0.0.1"] }))
      )
      expect(result.content).toBe(
        `Prompt: How do I install it?\nPage: ${server.url("/docs")}\n\n# Docs\n\nInstall with npm.`
      )
      // With the defaults, the same local server is refused.
      const refused = yield* fetchPage(server.url("/docs"), "p").pipe(Effect.provide(runtime(defaults)))
      expect(refused.is_error).toBe(true)
      expect(server.requests).toHaveLength(1)
    }))
})
