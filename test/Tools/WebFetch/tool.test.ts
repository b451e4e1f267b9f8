/**
 * WebFetch's other parts: URL normalisation (what rules see), the cache (expiry on the TestClock, LRU by bytes),
 * the PageReader layers (the default one, and a scripted @effect/ai LanguageModel), traits and claims.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Stream, TestClock } from "effect"
import * as EffectAiPageReader from "../../../src/Integrations/EffectAiPageReader.js"
import { makePageCache } from "../../../src/Tools/Web/Cache.js"
import { htmlText, nestingEstimate } from "../../../src/Tools/Web/Content.js"
import { PageReader } from "../../../src/Tools/Web/PageReader.js"
import { isFollowedRedirect, normalizeUrl } from "../../../src/Tools/Web/Url.js"
import { WebFetchTool } from "../../../src/Tools/WebFetch.js"
import type { WebFetchOutput } from "../../../src/Tools/WebFetch.js"
import { fetch, resultText, runtime, serve, testOptions } from "./helpers.js"

const plainFor = (...hosts: Array<string>) => (host: string) => hosts.includes(host)
const normalized = (raw: string, plain = plainFor()) => Either.map(normalizeUrl(raw, plain), (url) => url.href)

describe("WebFetch: URLs", () => {
  it("normalises before any rule sees the URL", () => {
    expect(normalized("http://Example.COM./a#frag")).toEqual(Either.right("https://example.com/a"))
    expect(normalized("http://localhost:8080/x", plainFor("localhost"))).toEqual(
      Either.right("http://localhost:8080/x")
    )
    expect(normalized("https://bücher.example/")).toEqual(Either.right("https://xn--bcher-kva.example/"))
    expect(normalized("http://2130706433/")).toEqual(Either.right("https://127.0.0.1/"))
    expect(normalized("ftp://example.com/")).toEqual(Either.left("Only http: and https: URLs can be fetched, not ftp:"))
    expect(normalized("https://user:pw@example.com/")).toEqual(
      Either.left("URLs with a user name or password are not fetched.")
    )
    expect(normalized("not a url")).toEqual(Either.left(`"not a url" is not a valid absolute URL.`))
    expect(normalized(`https://example.com/${"a".repeat(2000)}`)).toEqual(
      Either.left("The URL is longer than 2000 characters.")
    )
  })

  it("follows redirects only to the same host or its www. twin, same scheme and port", () => {
    const follows = (from: string, to: string) => isFollowedRedirect(new URL(from), new URL(to))
    expect(follows("https://a.test/x", "https://a.test/y")).toBe(true)
    expect(follows("https://a.test/x", "https://www.a.test/y")).toBe(true)
    expect(follows("https://www.a.test/x", "https://a.test/y")).toBe(true)
    expect(follows("https://a.test/x", "https://www.www.a.test/y")).toBe(false)
    expect(follows("https://a.test/x", "https://b.test/y")).toBe(false)
    expect(follows("https://a.test/x", "https://a.test.evil/y")).toBe(false)
    expect(follows("https://a.test/x", "http://a.test/y")).toBe(false)
    expect(follows("https://a.test/x", "https://a.test:8443/y")).toBe(false)
  })

  it.scopedLive("an invalid URL is a validation error for the model; http is upgraded in the executed input", () =>
    Effect.gen(function*() {
      const layer = runtime(testOptions({ plainHttp: [] }), { allow: ["WebFetch"] })
      const [bad, upgraded] = yield* Effect.all([fetch("file:///etc/passwd"), fetch("http://site.test:1/")]).pipe(
        Effect.provide(layer)
      )
      expect(bad!.status).toBe("error")
      expect(bad!.error?._tag).toBe("ValidationFailed")
      expect(resultText(bad!)).toContain("Only http: and https: URLs can be fetched, not file:")
      expect(upgraded!.executedInput).toEqual({ url: "https://site.test:1/", prompt: "What does the page say?" })
    }))

  it("is read-only, concurrency-safe and open-world, claims nothing, and suggests a domain rule", () =>
    Effect.gen(function*() {
      const service = yield* WebFetchTool
      const input = { url: "https://docs.example.com/page", prompt: "p" }
      expect(service.plan(input).traits).toEqual({
        readOnly: true,
        concurrencySafe: true,
        openWorld: true,
        destructive: false
      })
      expect(service.plan(input).claims).toEqual([])
      const check = yield* service.plan(input).checkPermissions({
        toolUseId: "t",
        toolName: "WebFetch",
        progress: () => Effect.void,
        isReadDenied: () => false
      })
      expect(check).toEqual({ _tag: "Passthrough", suggestions: ["WebFetch(domain:docs.example.com)"] })
    }).pipe(Effect.provide(WebFetchTool.layer()), Effect.scoped, Effect.runPromise))
})

describe("WebFetch: the cache", () => {
  it.scoped("reuses a page for 15 minutes on the clock, then fetches it again", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("cached words")
      })
      const layer = runtime(testOptions())
      yield* Effect.gen(function*() {
        const first = yield* fetch(server.url("/c"))
        yield* TestClock.adjust("14 minutes")
        const second = yield* fetch(server.url("/c"), "another prompt")
        yield* TestClock.adjust("1 minute")
        const third = yield* fetch(server.url("/c"))
        expect([first, second, third].map((o) =>
          (o.output as WebFetchOutput)._tag === "Page" && (o.output as { cached: boolean }).cached
        )).toEqual([false, true, false])
        // The prompt is applied to the cached page each time.
        expect(resultText(second)).toContain("Prompt: another prompt")
        expect(server.requests).toHaveLength(2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("evicts the least recently used pages to stay within its bytes", () =>
    Effect.gen(function*() {
      const cache = makePageCache<string>({ maxBytes: 100, ttlMillis: 60_000 })
      yield* cache.set("a", "A", 40)
      yield* cache.set("b", "B", 40)
      expect(yield* cache.get("a")).toBe("A") // a is now the most recently used
      yield* cache.set("c", "C", 40) // evicts b
      expect(yield* cache.get("b")).toBeUndefined()
      expect(yield* cache.get("a")).toBe("A")
      expect(yield* cache.get("c")).toBe("C")
      expect(cache.bytes()).toBe(80)
      yield* cache.set("huge", "H", 101) // larger than the whole cache: not kept, nothing evicted
      expect(yield* cache.get("huge")).toBeUndefined()
      expect(cache.bytes()).toBe(80)
      yield* TestClock.adjust("1 minute")
      expect(yield* cache.get("a")).toBeUndefined()
    }))
})

describe("WebFetch: the PageReader", () => {
  it.effect("the default reader returns the page within its budget, headed by the prompt", () =>
    Effect.gen(function*() {
      const reader = yield* PageReader
      const answer = yield* reader.read({
        url: "https://a.test/",
        prompt: "What is it?",
        content: "x".repeat(30),
        format: "text"
      })
      expect(answer).toBe(
        `Prompt: What is it?\nPage: https://a.test/\n\n${
          "x".repeat(10)
        }\n\n[Content truncated: the first 10 of 30 characters are shown.]`
      )
    }).pipe(Effect.provide(PageReader.layer({ maxChars: 10 }))))

  it.scopedLive("a LanguageModel-backed reader answers the prompt from the page", () =>
    Effect.gen(function*() {
      const prompts: Array<string> = []
      const model = Layer.effect(
        LanguageModel.LanguageModel,
        LanguageModel.make({
          generateText: (options) =>
            Effect.sync(() => {
              prompts.push(JSON.stringify(options.prompt.content))
              return [{ type: "text", text: "The price is 42 euros." }]
            }),
          streamText: () => Stream.empty
        })
      )
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end("<html><body><h2>Prices</h2><p>The widget costs 42 euros.</p></body></html>")
      })
      const layer = runtime(testOptions({ pageReader: EffectAiPageReader.layer().pipe(Layer.provide(model)) }))
      const outcome = yield* fetch(server.url("/prices"), "How much is the widget?").pipe(Effect.provide(layer))
      expect(resultText(outcome)).toBe("The price is 42 euros.")
      expect(prompts).toHaveLength(1)
      expect(prompts[0]).toContain("## Prices\\n\\nThe widget costs 42 euros.")
      expect(prompts[0]).toContain("How much is the widget?")
    }))

  it.scopedLive("a failing model is a model-readable error", () =>
    Effect.gen(function*() {
      const failure = new AiError.UnknownError({ module: "Test", method: "generateText", description: "rate limited" })
      const model = Layer.effect(
        LanguageModel.LanguageModel,
        LanguageModel.make({ generateText: () => Effect.fail(failure), streamText: () => Stream.empty })
      )
      const server = yield* serve((_, response) => response.end("text"))
      const layer = runtime(testOptions({ pageReader: EffectAiPageReader.layer().pipe(Layer.provide(model)) }))
      const outcome = yield* fetch(server.url("/")).pipe(Effect.provide(layer))
      expect(outcome.status).toBe("error")
      expect(resultText(outcome)).toContain(`The model reading ${server.url("/")} failed: ${failure.message}`)
      expect(failure.message).toContain("rate limited")
    }))
})

describe("WebFetch: HTML bounds", () => {
  it("estimates nesting from tags, ignoring elements that cannot nest and script text", () => {
    expect(nestingEstimate("<div><div><p>a<p>b<li>c</div></div>")).toBe(2)
    expect(nestingEstimate("<b><i><u>x")).toBe(3)
    expect(nestingEstimate(`<script>"${"<div>".repeat(1000)}"</script><div></div>`)).toBe(1)
    expect(nestingEstimate("<br><img src=x><hr/>")).toBe(0)
  })

  it("plain text of a page drops tags and script text and decodes entities", () => {
    expect(htmlText("<p>a &amp; b</p><script>x()</script><style>.y{}</style><p>&#x263A; &lt;ok&gt;</p>")).toBe(
      "a & b ☺ <ok>"
    )
    expect(htmlText("<p>open <script>never closed")).toBe("open")
  })
})
