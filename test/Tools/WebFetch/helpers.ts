/**
 * Shared fixtures of the WebFetch tests: real node:http servers on 127.0.0.1 (scoped, recording every request),
 * resolvers that play DNS, and a ToolRuntime over WebFetch with the full permission policy.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Ref } from "effect"
import type { Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import type { Outcome } from "../../../src/Tool/Outcome.js"
import { PageReader } from "../../../src/Tools/Web/PageReader.js"
import { ResolveError, Resolver, toResolved } from "../../../src/Tools/Web/Resolver.js"
import { WebFetchTool } from "../../../src/Tools/WebFetch.js"
import type { WebFetchOptions } from "../../../src/Tools/WebFetch.js"

/** One request a test server received. */
export interface Received {
  readonly method: string
  readonly path: string
  readonly host: string
  readonly headers: http.IncomingHttpHeaders
}

/** A running test server. */
export interface TestServer {
  readonly port: number
  /** `http://127.0.0.1:PORT` + path. */
  readonly url: (path: string) => string
  /** `http://HOST:PORT` + path, for names the test resolver maps to 127.0.0.1. */
  readonly named: (host: string, path: string) => string
  readonly requests: Array<Received>
}

/** Starts a node:http server on 127.0.0.1 for the scope; every request is recorded before the handler runs. */
export const serve = (
  handler: (request: http.IncomingMessage, response: http.ServerResponse) => void
): Effect.Effect<TestServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; state: TestServer }>((resume) => {
      const requests: Array<Received> = []
      const server = http.createServer((request, response) => {
        requests.push({
          method: request.method ?? "",
          path: request.url ?? "",
          host: request.headers.host ?? "",
          headers: request.headers
        })
        handler(request, response)
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({
          server,
          state: {
            port,
            url: (path) => `http://127.0.0.1:${port}${path}`,
            named: (host, path) => `http://${host}:${port}${path}`,
            requests
          }
        }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))

/** A resolver answering from a table of names to addresses, counting lookups per name. */
export const tableResolver = (table: Readonly<Record<string, ReadonlyArray<string>>>, lookups?: Map<string, number>) =>
  Layer.succeed(Resolver, {
    resolve: (hostname) =>
      Effect.suspend(() => {
        lookups?.set(hostname, (lookups.get(hostname) ?? 0) + 1)
        const answer = table[hostname]
        return answer === undefined
          ? Effect.fail(new ResolveError({ hostname, message: "ENOTFOUND" }))
          : Effect.succeed(answer.map(toResolved))
      })
  })

/** A resolver whose answers for a name change on each lookup (the last answer repeats): DNS rebinding. */
export const rebindingResolver = (
  answers: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string>>>>,
  lookups: Map<string, number>
) =>
  Layer.succeed(Resolver, {
    resolve: (hostname) =>
      Effect.sync(() => {
        const count = lookups.get(hostname) ?? 0
        lookups.set(hostname, count + 1)
        const list = answers[hostname] ?? [[]]
        return (list[Math.min(count, list.length - 1)] ?? []).map(toResolved)
      })
  })

/** Names the tests' resolver maps to the loopback server. */
export const testNames = ["site.test", "www.site.test", "other.test", "public.test"] as const

/** WebFetch as the tests configure it: 127.0.0.1 allowed and plain, the test names resolving to it. */
export const testOptions = (options: WebFetchOptions = {}): WebFetchOptions => ({
  allowPrivate: ["127.0.0.1"],
  plainHttp: ["127.0.0.1", ...testNames],
  resolver: Resolver.layerStatic(Object.fromEntries(testNames.map((name) => [name, ["127.0.0.1"]]))),
  ...options
})

/** Rules for the runtime's permission policy. */
export interface Rules {
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  readonly ask?: ReadonlyArray<string>
}

/**
 * A ToolRuntime with WebFetch, the full permission policy with these command-line rules, no hooks and an approver
 * (default: allow once) that records what it was asked.
 */
export const runtime = (
  options: WebFetchOptions,
  rules: Rules = { allow: ["WebFetch"] },
  approver: Layer.Layer<Approver> = Approver.allowAll
) =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([WebFetchTool]), WebFetchTool.layer(options))),
    Layer.provide([
      RulePolicy.layer({ cliRules: { allow: rules.allow ?? [], deny: rules.deny ?? [], ask: rules.ask ?? [] } }),
      approver,
      ToolHooks.none,
      ResultStore.layerMemory()
    ]),
    Layer.provide(Workspace.layer({ cwd: os.tmpdir() })),
    Layer.provide(NodeFileSystem.layer)
  )

/** An approver that records requests and answers by a function. */
export const recordingApprover = (asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>, allow: boolean) =>
  Approver.scripted(
    () =>
      Effect.succeed(
        allow ? ApprovalAnswer.AllowOnce() : ApprovalAnswer.Deny({ message: "The person said no.", cancelRun: false })
      ),
    asked
  )

let counter = 0

/** Fetches through the runtime: one tool_use, its Outcome. */
export const fetch = (url: string, prompt = "What does the page say?"): Effect.Effect<Outcome, never, ToolRuntime> =>
  ToolRuntime.pipe(
    Effect.flatMap((rt) =>
      rt.executeOne({ type: "tool_use", id: `toolu_${++counter}`, name: "WebFetch", input: { url, prompt } })
    )
  )

/** The text of an Outcome's tool_result. */
export const resultText = (outcome: Outcome): string => {
  const content = outcome.result.content
  return typeof content === "string"
    ? content
    : content.map((block) => (block.type === "text" ? block.text : "")).join("")
}

/** A PageReader returning the page only, so tests can compare content exactly. */
export const contentReader = Layer.succeed(PageReader, { read: (request) => Effect.succeed(request.content) })

export { Ref }
