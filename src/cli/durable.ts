/**
 * `--durable` for `exec` and `serve`: the runtime of {@link runtimeLayer}, with its turns run by `DurableTurns`
 * (src/Durable). Loaded only when the flag is given (the durable dependencies stay out of every other start).
 * `--durable` alone (or `sqlite`): one runner on SQLite in the session directory. `--durable postgres://...`: this
 * process is one runner of a cluster on that database, listening at `--runner-address` (default 127.0.0.1 at a port
 * the system picks) for the messages of the shards it holds.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as net from "node:net"
import * as DurableRunners from "../Durable/DurableRunners.js"
import { DurableTurns } from "../Durable/DurableTurns.js"
import type { Approver } from "../Permission/Approver.js"
import type { ToolEvent } from "../Runtime/Events.js"
import type { SchedulingMode } from "../Runtime/ToolRuntime.js"
import { Session } from "../Session/Session.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import { servicesLayer } from "./layer.js"
import type { RuntimeOptions } from "./layer.js"

/** The durable runtime and `DurableTurns`, over the session in context. */
export const durableRuntimeLayer = <E, R>(options: RuntimeOptions, approver: Layer.Layer<Approver, E, R>) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const store = options.durable ?? "sqlite"
    if (store === "sqlite") {
      const session = yield* Session
      return DurableTurns.layerSqlite({ directory: session.directory })
    }
    const port = store.port ?? (yield* freePort(store.host))
    return DurableRunners.layerPostgres({ url: store.url, host: store.host, port })
  })).pipe(Layer.provideMerge(servicesLayer(options, approver)))

/** `serve --mcp --durable`: each call a durable turn of the session, on SQLite in its directory. */
export const servedCalls = (directory: string) => DurableTurns.servedCalls({ directory })

/** A port nobody listens on at `host` now (the runner listens on it a moment later). */
const freePort = (host: string): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    const server = net.createServer()
    server.once("error", (error) =>
      resume(Effect.dieMessage(`cannot listen on ${host} for the durable runner: ${error.message}`)))
    server.listen(0, host, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() =>
        resume(Effect.succeed(port))
      )
    })
  })

/**
 * One turn of the session in context, run durably: its outcomes in model order; its events to `onEvent` while its
 * workflow runs in this process.
 */
export type DurableRun = (request: {
  readonly toolUses: ReadonlyArray<ToolUseBlock>
  readonly mode: SchedulingMode
  readonly onEvent?: ((event: ToolEvent) => Effect.Effect<void>) | undefined
}) => Effect.Effect<ReadonlyArray<Outcome>>

/** The {@link DurableRun} of the durable layer and session in context. */
export const durableRun: Effect.Effect<DurableRun, never, DurableTurns | Session> = Effect.gen(function*() {
  const turns = yield* DurableTurns
  const session = yield* Session
  return (request) => turns.execute({ session: session.directory, ...request })
})
