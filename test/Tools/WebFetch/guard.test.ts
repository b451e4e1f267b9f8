/**
 * The address guard end to end: every literal form of a non-public address refused before any connection, names
 * resolving to private addresses, a redirect into a private address, a rebinding resolver (the socket goes to the
 * checked address and the name is resolved once per hop), and the `allowPrivate` setting.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { rebindingResolver, resultText, runtime, serve, tableResolver, testOptions } from "./helpers.js"
import { fetch } from "./helpers.js"

describe("WebFetch: the address guard", () => {
  it.scopedLive("refuses every literal form of loopback and other non-public addresses, and connects to none", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => response.end("should never be reached"))
      const port = server.port
      const forms = [
        "127.0.0.1",
        "2130706433",
        "0x7f000001",
        "0x7F.0.0.1",
        "017700000001",
        "0177.0.0.1",
        "0177.0.0.01",
        "127.1",
        "127.0.1",
        "0x7f.1",
        "127.000.000.001",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[0:0:0:0:0:ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "0.0.0.0",
        "0",
        "[::]",
        "169.254.169.254",
        "2852039166",
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "[fd00::1]",
        "[fe80::1]",
        "[64:ff9b::127.0.0.1]",
        "[2002:7f00:1::]"
      ]
      // No allowPrivate: the defaults a user gets. Plain http for all, so the refusal is the guard's, not TLS's.
      const layer = runtime({ plainHttp: forms.map((f) => new URL(`http://${f}/`).hostname) })
      const outcomes = yield* Effect.forEach(forms, (form) => fetch(`http://${form}:${port}/`)).pipe(
        Effect.provide(layer)
      )
      for (const [i, outcome] of outcomes.entries()) {
        expect(outcome.status, forms[i]).toBe("error")
        expect(resultText(outcome), forms[i]).toContain(
          "WebFetch does not connect to loopback, private, link-local or other non-public addresses"
        )
      }
      expect(server.requests).toHaveLength(0)
    }))

  it.scopedLive("refuses a public-looking name that resolves to a private address", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => response.end("reached"))
      const layer = runtime(
        testOptions({
          resolver: tableResolver({
            "metadata.test": ["169.254.169.254"],
            "looks-public.test": ["93.184.216.34", "10.1.2.3"],
            "localhost": ["127.0.0.1"]
          })
        }),
        { allow: ["WebFetch"] }
      )
      const [metadata, mixed] = yield* Effect.all([
        fetch(server.named("metadata.test", "/latest/meta-data")),
        fetch(server.named("looks-public.test", "/"))
      ]).pipe(Effect.provide(layer))
      expect(resultText(metadata!)).toContain(
        "metadata.test resolves to 169.254.169.254, a link-local address (169.254.0.0/16)."
      )
      // One public answer does not vouch for the others: a name with any refused answer is refused as a whole.
      expect(resultText(mixed!)).toContain("looks-public.test resolves to 10.1.2.3, a private address (10.0.0.0/8).")
      expect(server.requests).toHaveLength(0)
    }))

  it.scopedLive("refuses a same-host redirect whose name now resolves to a private address", () =>
    Effect.gen(function*() {
      const server = yield* serve((request, response) => {
        if (request.url === "/start") {
          response.writeHead(302, { location: "/next" })
          return response.end()
        }
        response.end("reached next")
      })
      const lookups = new Map<string, number>()
      const layer = runtime(
        testOptions({ resolver: rebindingResolver({ "public.test": [["127.0.0.1"], ["10.0.0.7"]] }, lookups) })
      )
      const outcome = yield* fetch(server.named("public.test", "/start")).pipe(Effect.provide(layer))
      expect(outcome.status).toBe("error")
      expect(resultText(outcome)).toContain("public.test resolves to 10.0.0.7, a private address (10.0.0.0/8).")
      expect(server.requests.map((r) => r.path)).toEqual(["/start"])
      expect(lookups.get("public.test")).toBe(2)
    }))

  it.scopedLive("a redirect to a private literal is handed back, and fetching it is refused", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" })
        response.end()
      })
      const layer = runtime(testOptions())
      const redirect = yield* fetch(server.named("public.test", "/")).pipe(Effect.provide(layer))
      expect(resultText(redirect)).toContain("Redirect URL: https://169.254.169.254/latest/meta-data/")
      const followed = yield* fetch("https://169.254.169.254/latest/meta-data/").pipe(Effect.provide(layer))
      expect(resultText(followed)).toContain("169.254.169.254 is a link-local address (169.254.0.0/16).")
    }))

  it.scopedLive("connects to the address it checked: a rebinding resolver is asked once and cannot move the socket", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("the checked address answered")
      })
      const lookups = new Map<string, number>()
      // First answer: the (allowed) loopback server; every later answer: the metadata address.
      const layer = runtime(
        testOptions({
          resolver: rebindingResolver({ "rebind.test": [["127.0.0.1"], ["169.254.169.254"]] }, lookups),
          plainHttp: ["rebind.test"]
        })
      )
      const outcome = yield* fetch(server.named("rebind.test", "/"), "p").pipe(Effect.provide(layer))
      expect(outcome.status).toBe("success")
      expect(resultText(outcome)).toContain("the checked address answered")
      expect(lookups.get("rebind.test")).toBe(1)
      expect(server.requests.map((r) => r.host)).toEqual([`rebind.test:${server.port}`])
    }))

  it.scopedLive("a rebinding resolver whose first answer is private is refused before connecting", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => response.end("reached"))
      const lookups = new Map<string, number>()
      const layer = runtime(
        testOptions({
          resolver: rebindingResolver({ "rebind.test": [["127.0.0.53"], ["127.0.0.1"]] }, lookups),
          plainHttp: ["rebind.test"]
        })
      )
      const outcome = yield* fetch(server.named("rebind.test", "/")).pipe(Effect.provide(layer))
      expect(resultText(outcome)).toContain("rebind.test resolves to 127.0.0.53, a loopback address (127.0.0.0/8).")
      expect(server.requests).toHaveLength(0)
    }))

  it.scopedLive("allowPrivate names hosts and ranges that may be reached", () =>
    Effect.gen(function*() {
      const server = yield* serve((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("inside")
      })
      const resolver = tableResolver({ "intranet.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] })
      const byName = runtime({
        allowPrivate: ["intranet.test"],
        plainHttp: ["intranet.test", "other.test", "127.0.0.1"],
        resolver
      })
      const [named, unnamed, literal] = yield* Effect.all([
        fetch(server.named("intranet.test", "/")),
        fetch(server.named("other.test", "/")),
        fetch(server.url("/"))
      ]).pipe(Effect.provide(byName))
      expect(named!.status).toBe("success")
      expect(unnamed!.status).toBe("error")
      expect(literal!.status).toBe("error")
      const byRange = runtime({ allowPrivate: ["127.0.0.0/8"], plainHttp: ["127.0.0.1"] })
      expect((yield* fetch(server.url("/")).pipe(Effect.provide(byRange))).status).toBe("success")
    }))

  it.effect("an allowPrivate entry that is neither a host nor a range fails the layer", () =>
    Effect.gen(function*() {
      const { WebFetchTool } = yield* Effect.promise(() => import("../../../src/Tools/WebFetch.js"))
      const error = yield* Effect.flip(
        Effect.scoped(
          WebFetchTool.layer({ allowPrivate: ["10.0.0.0/99"] }).pipe((layer) =>
            Effect.asVoid(Effect.provide(Effect.void, layer))
          )
        )
      )
      expect(error.message).toBe(`allowPrivate: "10.0.0.0/99" has an invalid prefix length`)
    }))
})
