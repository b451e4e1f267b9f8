/**
 * `--durable` for `exec` and `serve`: the runtime of {@link runtimeLayer}, with its turns run by `DurableTurns`
 * (src/Durable). Loaded only when the flag is given (the durable dependencies stay out of every other start).
 * `--durable` alone (or `sqlite`): one runner on SQLite in the session directory.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DurableTurns } from "../Durable/DurableTurns.js"
import type { Approver } from "../Permission/Approver.js"
import { Session } from "../Session/Session.js"
import { servicesLayer } from "./layer.js"
import type { RuntimeOptions } from "./layer.js"

/** The durable runtime and `DurableTurns`, over the session in context. */
export const durableRuntimeLayer = <E, R>(options: RuntimeOptions, approver: Layer.Layer<Approver, E, R>) =>
  Layer.unwrapEffect(Effect.map(Session, (session) => DurableTurns.layerSqlite({ directory: session.directory })))
    .pipe(Layer.provideMerge(servicesLayer(options, approver)))
