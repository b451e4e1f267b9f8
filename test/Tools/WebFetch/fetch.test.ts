/**
 * WebFetch against real node:http servers on 127.0.0.1: pages and their conversion, charsets, JSON, binary,
 * error statuses, the request it sends, the limits (50 MB body, trickling body, silent server, interruption, total
 * time, gzip bomb, hostile HTML) and presentation.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as crypto from "node:crypto"
import * as zlib from "node:zlib"
import { toText } from "../../../src/Tool/Presentation.js"
import type { WebFetchOutput } from "../../../src/Tools/WebFetch.js"
import { pollFor } from "../../support/index.js"
import { contentReader, fetch, resultText, runtime, serve, testOptions } from "./helpers.js"

const html = (body: string, head = "") => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`

const page = (output: unknown) => {
  const value = output as WebFetchOutput
  if (value._tag !== "Page") throw new Error(`expected a page, got ${value._tag}`)
  return value
}

describe("WebFetch: pages", () => {
  it.scopedLive("converts HTML to markdown without scripts, styles, noscript, iframes or the title", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end(html(
          `<h1>Hello</h1><p>Some <b>bold</b> text and <a href="/x">a link</a>.</p><script>alert("script text")</script><style>.x{color:red}</style><noscript>noscript text</noscript><iframe src="/frame">iframe text</iframe><ul><li>one</li><li>two</li></ul>`,
          "<title>Title text</title><script>var head = 1</script>"
        ))
      })
      const outcome = yield* fetch(server.url("/page"), "Summarise").pipe(Effect.provide(runtime(testOptions())))
      expect(outcome.status).toBe("success")
      const text = resultText(outcome)
      expect(text).toBe(
        `Prompt: Summarise\nPage: ${
          server.url("/page")
        }\n\n# Hello\n\nSome **bold** text and [a link](/x).\n\n-   one\n-   two`
      )
      for (const leaked of ["script text", "color:red", "noscript text", "iframe text", "Title text", "var head"]) {
        expect(text).not.toContain(leaked)
      }
    }))

  it.scopedLive("shows URL, status, size, time and cache state, and says when a page came from the cache", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("plain words")
      })
      const [first, second] = yield* Effect.all([fetch(server.url("/a")), fetch(server.url("/a"))]).pipe(
        Effect.provide(runtime(testOptions()))
      )
      expect(page(first!.output).cached).toBe(false)
      expect(page(second!.output).cached).toBe(true)
      expect(server.requests).toHaveLength(1)
      const audit = toText(second!.ui)
      expect(audit).toContain(`URL: ${server.url("/a")}`)
      expect(audit).toContain("status: 200 OK")
      expect(audit).toContain("size: 11 B")
      expect(audit).toMatch(/time: \d+ ms/)
      expect(audit).toContain("cached: yes")
      expect(audit).toContain("From the cache")
      expect(toText(first!.ui)).toContain("cached: no")
    }))

  it.scopedLive("passes JSON and markdown through unchanged", () =>
    Effect.gen(function*() {
      const json = `{"name": "effect", "list": [1, 2, 3], "html": "<b>not converted</b>"}`
      const markdown = "# Title\n\n<b>raw html stays</b> *as written*\n"
      const server = yield* serve((request, response) => {
        if (request.url === "/data.json") {
          response.writeHead(200, { "content-type": "application/json" })
          response.end(json)
        } else {
          response.writeHead(200, { "content-type": "text/markdown; charset=utf-8" })
          response.end(markdown)
        }
      })
      const layer = runtime(testOptions({ pageReader: contentReader }))
      const [data, notes] = yield* Effect.all([fetch(server.url("/data.json")), fetch(server.url("/notes.md"))]).pipe(
        Effect.provide(layer)
      )
      expect(resultText(data!)).toBe(json)
      expect(resultText(notes!)).toBe(markdown)
    }))

  it.scopedLive("decodes charsets from the header, a byte-order mark and a meta tag", () =>
    Effect.gen(function*() {
      const bodies: Record<string, { readonly type: string; readonly body: Buffer }> = {
        "/latin1": { type: "text/plain; charset=iso-8859-1", body: Buffer.from([0x63, 0x61, 0x66, 0xe9]) },
        "/cp1252": { type: "text/plain; charset=windows-1252", body: Buffer.from([0x80, 0x20, 0x93, 0x71, 0x94]) },
        "/sjis": { type: "text/plain; charset=shift_jis", body: Buffer.from([0x93, 0xfa, 0x96, 0x7b]) },
        "/bom": {
          type: "text/plain",
          body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("grüß", "utf16le")])
        },
        "/meta": {
          type: "text/html",
          body: Buffer.concat([
            Buffer.from(`<html><head><meta charset="iso-8859-2"></head><body><p>`),
            Buffer.from([0xb1]),
            Buffer.from("</p></body></html>")
          ])
        },
        "/unknown": { type: "text/plain; charset=x-no-such-charset", body: Buffer.from("héllo", "utf8") }
      }
      const server = yield* serve((request, response) => {
        const entry = bodies[request.url ?? ""]!
        response.writeHead(200, { "content-type": entry.type })
        response.end(entry.body)
      })
      const layer = runtime(testOptions({ pageReader: contentReader }))
      const texts = yield* Effect.forEach(
        Object.keys(bodies),
        (path) => Effect.map(fetch(server.url(path)), resultText)
      ).pipe(Effect.provide(layer))
      expect(texts.slice(0, 5)).toEqual(["café", "€ “q”", "日本", "grüß", "ą"])
      expect(texts[5]).toBe(
        `héllo\n\n[The page declares the unknown charset "x-no-such-charset"; it was read as UTF-8.]`
      )
    }))

  it.scopedLive("refuses binary content, declared or sniffed", () =>
    Effect.gen(function*() {
      const server = yield* serve((request, response) => {
        if (request.url === "/image.png") {
          response.writeHead(200, { "content-type": "image/png" })
          response.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]))
        } else {
          response.writeHead(200)
          response.end(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0]))
        }
      })
      const layer = runtime(testOptions())
      const [image, elf] = yield* Effect.all([fetch(server.url("/image.png")), fetch(server.url("/program"))]).pipe(
        Effect.provide(layer)
      )
      expect(image!.status).toBe("error")
      expect(resultText(image!)).toContain(
        `${server.url("/image.png")} is image/png, binary content that WebFetch does not read.`
      )
      expect(resultText(elf!)).toContain("has no content type and its body looks binary; WebFetch only reads text.")
    }))

  it.scopedLive("reports 404 and 500 to the model as errors", () =>
    Effect.gen(function*() {
      const server = yield* serve((request, response) => {
        response.writeHead(request.url === "/missing" ? 404 : 500, { "content-type": "text/html" })
        response.end("<p>error page</p>")
      })
      const layer = runtime(testOptions())
      const [missing, broken] = yield* Effect.all([fetch(server.url("/missing")), fetch(server.url("/broken"))]).pipe(
        Effect.provide(layer)
      )
      expect(missing!.status).toBe("error")
      expect(resultText(missing!)).toContain(
        `Request failed with status code 404 (Not Found): ${server.url("/missing")}`
      )
      expect(resultText(broken!)).toContain(
        `Request failed with status code 500 (Internal Server Error): ${server.url("/broken")}`
      )
    }))

  it.scopedLive("sends no tracing headers to the sites it fetches", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("ok")
      })
      const outcome = yield* fetch(server.url("/plain")).pipe(
        Effect.withSpan("a span of the program's"),
        Effect.provide(runtime(testOptions({ pageReader: contentReader })))
      )
      expect(outcome.status).toBe("success")
      const headers = Object.keys(server.requests[0]!.headers)
      expect(headers).not.toContain("traceparent")
      expect(headers).not.toContain("b3")
      expect(server.requests[0]!.headers["accept-encoding"]).toBe("gzip, deflate, br")
    }))
})

describe("WebFetch: limits", () => {
  it.scopedLive("reads a 50 MB body only up to the 10 MiB cap and stops the transfer", () =>
    Effect.gen(function*() {
      let written = 0
      let finished = false
      const total = 50 * 1024 * 1024
      const chunk = Buffer.alloc(64 * 1024, "a")
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain", "content-length": String(total) })
        const pump = () => {
          while (written < total) {
            written += chunk.length
            if (!response.write(chunk)) return void response.once("drain", pump)
          }
          finished = true
          response.end()
        }
        pump()
      })
      const outcome = yield* fetch(server.url("/big")).pipe(
        Effect.provide(runtime(testOptions({ pageReader: contentReader })))
      )
      const output = page(outcome.output)
      expect(output.bytes).toBe(10 * 1024 * 1024)
      expect(output.notes).toContain("The body was cut at 10.0 MB; the rest was not read.")
      // The server wrote what the socket buffers took before the connection closed, far from all 50 MB.
      yield* Effect.sleep("50 millis")
      expect(finished).toBe(false)
      expect(written).toBeLessThan(30 * 1024 * 1024)
    }))

  it.scopedLive("stops a body that trickles slower than the idle timeout", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.write("first bytes")
        const timer = setInterval(() => response.write("."), 1000)
        response.on("close", () => clearInterval(timer))
      })
      const outcome = yield* fetch(server.url("/slow")).pipe(
        Effect.provide(runtime(testOptions({ idleTimeout: "150 millis" })))
      )
      expect(outcome.status).toBe("error")
      expect(resultText(outcome)).toContain(`${server.url("/slow")} sent nothing for 150 ms; the fetch was stopped.`)
    }))

  it.scopedLive("stops a request whose headers do not come within the idle timeout, and closes its connection", () =>
    Effect.gen(function*() {
      let closed = false
      const server = yield* serve((request) => {
        // Never answers: the request hangs until the client gives up.
        request.socket.on("close", () => (closed = true))
      })
      const outcome = yield* fetch(server.url("/silent")).pipe(
        Effect.provide(runtime(testOptions({ idleTimeout: "150 millis" })))
      )
      expect(outcome.status).toBe("error")
      expect(resultText(outcome)).toContain(
        `${server.url("/silent")} sent no response for 150 ms; the fetch was stopped.`
      )
      // The abort reaches the server's socket a moment later.
      yield* pollFor(() => closed || undefined, 5_000)
    }))

  it.scopedLive("an interrupted fetch stops its transfer: the server sees the connection close", () =>
    Effect.gen(function*() {
      let written = 0
      let closed = false
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.write("first bytes")
        const timer = setInterval(() => {
          written++
          response.write(".")
        }, 5)
        response.on("close", () => {
          closed = true
          clearInterval(timer)
        })
      })
      const started = yield* fetch(server.url("/stream")).pipe(
        Effect.provide(runtime(testOptions({ idleTimeout: "10 seconds", timeout: "30 seconds" }))),
        Effect.fork
      )
      yield* pollFor(() => written >= 5 || undefined, 5_000)
      yield* Fiber.interrupt(started)
      yield* pollFor(() => closed || undefined, 5_000)
    }))

  it.scopedLive("stops a fetch that keeps sending past the total timeout", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        const timer = setInterval(() => response.write("."), 10)
        response.on("close", () => clearInterval(timer))
      })
      const outcome = yield* fetch(server.url("/forever")).pipe(
        Effect.provide(runtime(testOptions({ idleTimeout: "1 second", timeout: "300 millis" })))
      )
      expect(outcome.status).toBe("error")
      expect(resultText(outcome)).toContain(
        `Fetching ${server.url("/forever")} took longer than 300 ms; it was stopped.`
      )
    }))

  it.scopedLive("stops a gzip bomb at the decompressed cap", () =>
    Effect.gen(function*() {
      const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, "z"), { level: 9 })
      expect(bomb.length).toBeLessThan(1024 * 1024)
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        response.end(bomb)
      })
      const outcome = yield* fetch(server.url("/bomb")).pipe(
        Effect.provide(runtime(testOptions({ maxDecodedBytes: 2 * 1024 * 1024, pageReader: contentReader })))
      )
      const output = page(outcome.output)
      expect(output.bytes).toBe(2 * 1024 * 1024)
      expect(output.notes).toContain("The body was cut at 2.0 MB; the rest was not read.")
      expect(output.result.startsWith("zzzz")).toBe(true)
    }))

  it.scopedLive("a compressed body longer than the wire cap is cut there and decoded, not failed", () =>
    Effect.gen(function*() {
      // Text that compresses to about half: some 256 KiB on the wire, against a 64 KiB cap.
      const text = Buffer.from(crypto.randomBytes(256 * 1024).toString("hex"))
      const encoders = {
        gzip: zlib.gzipSync,
        deflate: zlib.deflateSync,
        br: (input: Buffer) => zlib.brotliCompressSync(input, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })
      }
      const server = yield* serve((request, response) => {
        const encoding = request.url!.slice(1) as keyof typeof encoders
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": encoding })
        response.end(encoders[encoding](text))
      })
      for (const encoding of Object.keys(encoders)) {
        const outcome = yield* fetch(server.url(`/${encoding}`)).pipe(
          Effect.provide(runtime(testOptions({ maxBodyBytes: 64 * 1024, pageReader: contentReader })))
        )
        expect(outcome.status, encoding).toBe("success")
        const output = page(outcome.output)
        // What the first 64 KiB decode to: a prefix of the page, well short of it.
        expect(output.bytes, encoding).toBeGreaterThan(0)
        expect(output.bytes, encoding).toBeLessThan(text.length / 4)
        expect(text.toString().startsWith(output.result), encoding).toBe(true)
        expect(output.notes.some((note) => note.startsWith("The body was cut at")), encoding).toBe(true)
      }
    }))

  it.scopedLive("an idle limit longer than a timer can wait is no limit, not an immediate one", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        setTimeout(() => {
          response.writeHead(200, { "content-type": "text/plain" })
          response.write("part one, ")
          setTimeout(() => response.end("part two"), 50)
        }, 50)
      })
      const outcome = yield* fetch(server.url("/slow")).pipe(
        Effect.provide(runtime(testOptions({ idleTimeout: "30 days", pageReader: contentReader })))
      )
      expect(outcome.status).toBe("success")
      expect(page(outcome.output).result).toBe("part one, part two")
    }))

  it.scopedLive("a fetch interrupted while the HTTP client loads leaves the next fetch working", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("hello")
      })
      // The first fetch of a runtime loads undici and makes its Agent. Interrupted after 0, 1, 2, ... steps of the
      // scheduler, one of them lands while it loads.
      for (let steps = 0; steps < 24; steps++) {
        yield* Effect.gen(function*() {
          const first = yield* Effect.fork(fetch(server.url("/first")))
          for (let i = 0; i < steps; i++) yield* Effect.yieldNow()
          yield* Fiber.interrupt(first)
          const outcome = yield* fetch(server.url("/second"))
          expect(outcome.status, `interrupted after ${steps} steps`).toBe("success")
        }).pipe(Effect.provide(runtime(testOptions({ pageReader: contentReader }))))
      }
    }))

  it.scopedLive("an uncompressed body is held to the smaller of the two caps", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end(Buffer.alloc(3 * 1024 * 1024, "b"))
      })
      const outcome = yield* fetch(server.url("/plain")).pipe(
        Effect.provide(runtime(testOptions({ maxDecodedBytes: 1024 * 1024, pageReader: contentReader })))
      )
      expect(page(outcome.output).bytes).toBe(1024 * 1024)
      expect(page(outcome.output).notes).toContain("The body was cut at 1.0 MB; the rest was not read.")
    }))

  it.scopedLive("decodes gzip, deflate and brotli bodies", () =>
    Effect.gen(function*() {
      const text = "compressed words ".repeat(100)
      const encoders: Record<string, (b: Buffer) => Buffer> = {
        gzip: zlib.gzipSync,
        deflate: zlib.deflateSync,
        br: zlib.brotliCompressSync
      }
      const server = yield* serve((request, response) => {
        const encoding = (request.url ?? "/").slice(1)
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": encoding })
        response.end(encoders[encoding]!(Buffer.from(text)))
      })
      const layer = runtime(testOptions({ pageReader: contentReader }))
      const texts = yield* Effect.forEach(["/gzip", "/deflate", "/br"], (path) =>
        Effect.map(fetch(server.url(path)), resultText)).pipe(Effect.provide(layer))
      expect(texts).toEqual([text, text, text])
    }))

  it.scopedLive(
    "converts a 5 MB hostile page within its bounds: the input is cut, deep nesting becomes plain text",
    () =>
      Effect.gen(function*() {
        const nested = "<div>".repeat(1_000_000) + "deep text"
        const wide = html("<p>paragraph <b>bold</b></p>\n".repeat(200_000))
        const server = yield* serve((request, response) => {
          response.writeHead(200, { "content-type": "text/html" })
          response.end(request.url === "/nested" ? nested : wide)
        })
        expect(nested.length).toBeGreaterThan(5_000_000)
        expect(wide.length).toBeGreaterThan(5_000_000)
        const layer = runtime(testOptions({ pageReader: contentReader }))
        const [deep, broad] = yield* Effect.all([fetch(server.url("/nested")), fetch(server.url("/wide"))]).pipe(
          Effect.provide(layer)
        )
        const deepPage = page(deep!.output)
        expect(deepPage.notes).toEqual([
          "The HTML was cut at 2000000 characters before conversion.",
          "The page nests elements about 400000 deep (more than 512); it is shown as plain text."
        ])
        const broadPage = page(broad!.output)
        expect(broadPage.notes).toEqual(["The HTML was cut at 2000000 characters before conversion."])
        expect(broadPage.result.startsWith("paragraph **bold**\n\nparagraph **bold**")).toBe(true)
      }),
    { timeout: 30_000 }
  )
})
