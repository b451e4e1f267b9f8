/**
 * WebFetch's redirects and permissions against real servers: same-host chains, the `www.` twin, cross-host
 * redirects handed back, domain rules on the first host and on every hop, and the hop limit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import type { ApprovalRequest } from "../../../src/Permission/Approver.js"
import { hopVerdict } from "../../../src/Tools/WebFetch.js"
import type { WebFetchOutput } from "../../../src/Tools/WebFetch.js"
import { contentReader, fetch, recordingApprover, resultText, runtime, serve, testOptions } from "./helpers.js"
import type { TestServer } from "./helpers.js"

/** A server where `/hop/N` redirects to `/hop/N-1` (same host), `/hop/0` answers, and `/to?u=URL` redirects to URL. */
const redirecting = (status = 302) =>
  serve((request, response) => {
    const url = new URL(request.url ?? "/", "http://x")
    const hop = /^\/hop\/(\d+)$/.exec(url.pathname)
    if (hop !== null && hop[1] !== "0") {
      response.writeHead(status, { location: `/hop/${Number(hop[1]) - 1}` })
      return response.end()
    }
    if (url.pathname === "/to") {
      response.writeHead(status, { location: url.searchParams.get("u")! })
      return response.end()
    }
    response.writeHead(200, { "content-type": "text/plain" })
    response.end(`arrived at ${request.headers.host}${url.pathname}`)
  })

const hosts = (server: TestServer) => server.requests.map((request) => request.host.replace(/:\d+$/, ""))

describe("WebFetch: redirects", () => {
  it.scopedLive("follows same-host redirects and reports the final URL", () =>
    Effect.gen(function*() {
      const server = yield* redirecting(301)
      const outcome = yield* fetch(server.url("/hop/3")).pipe(
        Effect.provide(runtime(testOptions({ pageReader: contentReader })))
      )
      const output = outcome.output as WebFetchOutput
      expect(output._tag).toBe("Page")
      expect(resultText(outcome)).toBe(`arrived at 127.0.0.1:${server.port}/hop/0`)
      expect(output._tag === "Page" && output.finalUrl).toBe(server.url("/hop/0"))
      expect(server.requests.map((r) => r.path)).toEqual(["/hop/3", "/hop/2", "/hop/1", "/hop/0"])
    }))

  it.scopedLive("stops after 10 redirects", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const [ten, eleven] = yield* Effect.all([fetch(server.url("/hop/10")), fetch(server.url("/hop/11"))]).pipe(
        Effect.provide(runtime(testOptions()))
      )
      expect(ten!.status).toBe("success")
      expect(eleven!.status).toBe("error")
      expect(resultText(eleven!)).toContain(
        `${server.url("/hop/11")} redirected more than 10 times; the fetch was stopped at ${server.url("/hop/1")}.`
      )
    }))

  it.scopedLive("hands a redirect to another host back to the model without fetching it", () =>
    Effect.gen(function*() {
      const server = yield* redirecting(307)
      const target = server.named("other.test", "/elsewhere")
      const outcome = yield* fetch(server.url(`/to?u=${encodeURIComponent(target)}`), "Find the price").pipe(
        Effect.provide(runtime(testOptions()))
      )
      expect(outcome.status).toBe("success")
      expect(resultText(outcome)).toBe(`REDIRECT DETECTED: The URL redirects to a different host.

Original URL: ${server.url(`/to?u=${encodeURIComponent(target)}`)}
Redirect URL: ${target}
Status: 307 Temporary Redirect

To complete your request, fetch the redirected URL with WebFetch again:
- url: "${target}"
- prompt: "Find the price"`)
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("hands back a redirect that changes scheme or port", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const otherPort = `http://127.0.0.1:${server.port + 1}/x`
      const https = `https://127.0.0.1:${server.port}/x`
      const layer = runtime(testOptions())
      const outcomes = yield* Effect.forEach([otherPort, https], (u) =>
        fetch(server.url(`/to?u=${encodeURIComponent(u)}`))).pipe(Effect.provide(layer))
      expect(outcomes.map((o) =>
        (o.output as WebFetchOutput)._tag
      )).toEqual(["Redirect", "Redirect"])
      expect(server.requests).toHaveLength(2)
    }))

  it.scopedLive("follows the www. twin when the rules cannot tell it from the host", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const start = server.named("site.test", `/to?u=${encodeURIComponent(server.named("www.site.test", "/hop/0"))}`)
      const outcome = yield* fetch(start).pipe(
        Effect.provide(
          runtime(testOptions({ pageReader: contentReader }), {
            allow: ["WebFetch(domain:site.test)", "WebFetch(domain:*.site.test)"]
          })
        )
      )
      expect(resultText(outcome)).toBe(`arrived at www.site.test:${server.port}/hop/0`)
      expect(hosts(server)).toEqual(["site.test", "www.site.test"])
    }))

  it.scopedLive("hands back the www. twin when only the first host is allowed", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const start = server.named("site.test", `/to?u=${encodeURIComponent(server.named("www.site.test", "/hop/0"))}`)
      const outcome = yield* fetch(start).pipe(
        Effect.provide(runtime(testOptions(), { allow: ["WebFetch(domain:site.test)"] }))
      )
      expect((outcome.output as WebFetchOutput)._tag).toBe("Redirect")
      expect(hosts(server)).toEqual(["site.test"])
    }))
})

describe("WebFetch: permissions", () => {
  it.scopedLive("a deny rule on the host refuses the call before anything is fetched", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const outcome = yield* fetch(server.named("site.test", "/hop/0")).pipe(
        Effect.provide(runtime(testOptions(), { allow: ["WebFetch"], deny: ["WebFetch(domain:*.test)"] }))
      )
      expect(outcome.status).toBe("denied")
      expect(resultText(outcome)).toContain("WebFetch(domain:*.test)")
      expect(server.requests).toHaveLength(0)
    }))

  it.scopedLive("an allow rule for the host runs the call without asking; another host asks", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const layer = runtime(testOptions(), { allow: ["WebFetch(domain:site.test)"] }, recordingApprover(asked, false))
      const [allowed, other] = yield* Effect.all([
        fetch(server.named("site.test", "/hop/0")),
        fetch(server.named("other.test", "/hop/0"))
      ]).pipe(Effect.provide(layer))
      expect(allowed!.status).toBe("success")
      expect(other!.status).toBe("denied")
      const requests = yield* Ref.get(asked)
      expect(requests.map((r) => r.suggestions)).toEqual([["WebFetch(domain:other.test)"]])
      expect(hosts(server)).toEqual(["site.test"])
    }))

  it.scopedLive("an ask rule asks even when another rule allows", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const layer = runtime(
        testOptions(),
        { allow: ["WebFetch"], ask: ["WebFetch(domain:site.test)"] },
        recordingApprover(asked, true)
      )
      const outcome = yield* fetch(server.named("site.test", "/hop/0")).pipe(Effect.provide(layer))
      expect(outcome.status).toBe("success")
      expect(yield* Ref.get(asked)).toHaveLength(1)
    }))

  it.scopedLive("a redirect hop to a denied host stops the fetch with a permission error", () =>
    Effect.gen(function*() {
      const server = yield* redirecting()
      const start = server.named("site.test", `/to?u=${encodeURIComponent(server.named("www.site.test", "/hop/0"))}`)
      const outcome = yield* fetch(start).pipe(
        Effect.provide(
          runtime(testOptions(), {
            allow: ["WebFetch(domain:site.test)", "WebFetch(domain:*.site.test)"],
            deny: ["WebFetch(domain:www.site.test)"]
          })
        )
      )
      expect(outcome.status).toBe("error")
      expect(resultText(outcome)).toContain(
        `Permission to use WebFetch has been denied by the deny rule WebFetch(domain:www.site.test): ${start} redirected to ${
          server.named("www.site.test", "/hop/0")
        }. The fetch was stopped.`
      )
      expect(hosts(server)).toEqual(["site.test"])
    }))

  it("every hop is judged by the rules again, the same host included", () => {
    const rule = (content: string) => ({ content, ruleDirectory: undefined })
    const start = new URL("https://site.test/a")
    const same = new URL("https://site.test/b")
    const twin = new URL("https://www.site.test/b")
    const checked = (rules: { deny?: Array<string>; ask?: Array<string>; allow?: Array<string> }) => ({
      checked: true,
      rules: {
        deny: (rules.deny ?? []).map(rule),
        ask: (rules.ask ?? []).map(rule),
        allow: (rules.allow ?? []).map(rule)
      }
    })
    // A rule set that denies the host now (e.g. one that changed since the call was authorised) stops a same-host hop.
    expect(hopVerdict(checked({ deny: ["domain:site.test"] }), start, same)._tag).toBe("Deny")
    expect(hopVerdict(checked({ deny: ["not a domain rule"] }), start, same)._tag).toBe("Deny")
    expect(hopVerdict(checked({ ask: ["domain:site.test"] }), start, same)._tag).toBe("Follow")
    expect(hopVerdict(checked({}), start, same)._tag).toBe("Follow")
    expect(hopVerdict(checked({}), start, twin)._tag).toBe("Follow")
    expect(hopVerdict(checked({ allow: ["domain:site.test"] }), start, twin)._tag).toBe("HandBack")
    expect(hopVerdict(checked({ allow: ["domain:site.test", "domain:www.site.test"] }), start, twin)._tag).toBe(
      "Follow"
    )
    expect(hopVerdict(checked({ ask: ["domain:www.site.test"] }), start, twin)._tag).toBe("HandBack")
    // Never put through the permission stage: only its own host is followed.
    expect(hopVerdict({ checked: false, rules: undefined }, start, same)._tag).toBe("Follow")
    expect(hopVerdict({ checked: false, rules: undefined }, start, twin)._tag).toBe("HandBack")
  })
})
