/**
 * The guarded HTTP fetch behind WebFetch, on an undici Agent.
 *
 * - **Addresses**: every hop's host is resolved here, once, by the {@link Resolver}; every answer is checked against
 *   the {@link AddressPolicy}, and the checked addresses are pinned for the connection: the undici Agent's `lookup`
 *   answers only from those pins, so nothing resolves the name a second time (no DNS rebinding). Literal hosts never
 *   reach a lookup, so they are checked here too.
 * - **Redirects** are not followed by the client. A redirect to the same host or its `www.` twin (same scheme and
 *   port) is followed up to `maxRedirects` times, each hop checked again (`checkHop`, then its addresses); any other
 *   redirect is handed back as {@link NotFollowed}.
 * - **Limits**: headers and every body chunk must arrive within `idleTimeout`; the body is streamed and read up to
 *   `maxBodyBytes` on the wire and `maxDecodedBytes` after decompression (gzip, deflate, br), the rest never read.
 *
 * @since 0.2.0
 */
import type * as Undici from "@effect/platform-node/Undici"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type * as http from "node:http"
import { createRequire } from "node:module"
import type * as net from "node:net"
import type { Duplex, Readable } from "node:stream"
import type * as zlib from "node:zlib"
import { onceInScope } from "../../Shared/once.js"
import { MAX_TIMER_MILLIS } from "../../Shared/realTime.js"
import type { AddressPolicy } from "./Address.js"
import { literalAddress } from "./Address.js"
import type { ResolvedAddress } from "./Resolver.js"
import { Resolver, toResolved } from "./Resolver.js"
import { isFollowedRedirect, normalizeUrl } from "./Url.js"

// ---------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why a fetch failed; `message` is written for the model.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebFetchError
  extends Schema.TaggedError<WebFetchError>("effect-tool-runtime/Tools/WebFetch/WebFetchError")("WebFetchError", {
    reason: Schema.Literal(
      "InvalidUrl",
      "BlockedAddress",
      "Resolve",
      "PermissionDenied",
      "Transport",
      "Status",
      "TooManyRedirects",
      "IdleTimeout",
      "Timeout",
      "UnsupportedContent",
      "Conversion",
      "Reader"
    ),
    message: Schema.String,
    status: Schema.optional(Schema.Number)
  })
{}

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The limits of one fetch.
 *
 * @since 0.2.0
 * @category models
 */
export interface FetchLimits {
  readonly maxBodyBytes: number
  readonly maxDecodedBytes: number
  readonly idleTimeout: Duration.Duration
  readonly maxRedirects: number
}

/**
 * What a hop's permission check says: follow it, hand it back to the model, or stop.
 *
 * @since 0.2.0
 * @category models
 */
export type HopVerdict =
  | { readonly _tag: "Follow" }
  | { readonly _tag: "HandBack" }
  | { readonly _tag: "Deny"; readonly message: string }

/**
 * A redirect the fetch did not follow: the model is told to fetch `to` itself.
 *
 * @since 0.2.0
 * @category models
 */
export interface NotFollowed {
  readonly _tag: "NotFollowed"
  readonly from: URL
  readonly to: URL
  readonly status: number
  readonly statusText: string
  /** The hops followed before it. */
  readonly hops: ReadonlyArray<URL>
}

/**
 * A response whose headers arrived; the body is read by `readBody` (at most once).
 *
 * @since 0.2.0
 * @category models
 */
export interface Arrived {
  readonly _tag: "Arrived"
  readonly url: URL
  readonly status: number
  readonly statusText: string
  readonly headers: Readonly<Record<string, string>>
  /** The address the connection was made to (the checked one). */
  readonly addresses: ReadonlyArray<string>
  /** Every URL fetched, the first included. */
  readonly hops: ReadonlyArray<URL>
  readonly readBody: Effect.Effect<Body, WebFetchError>
}

/**
 * A body as read within the limits.
 *
 * @since 0.2.0
 * @category models
 */
export interface Body {
  readonly bytes: Uint8Array
  readonly wireBytes: number
  /** Whether a cap stopped the reading (the rest was never read). */
  readonly truncated: boolean
}

// ---------------------------------------------------------------------------------------------------------------
// the connector
// ---------------------------------------------------------------------------------------------------------------

/**
 * A response whose headers arrived. `headers` has lower-case names, a repeated header's values joined with `, `;
 * `body` is the response's body, which the connector destroys with the request's scope if it is not read to its end.
 *
 * @since 0.3.0
 * @category models
 */
export interface Received {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Readable
}

/**
 * Why a request got no response: the transport failed, or the headers did not come within the time allowed.
 *
 * @since 0.3.0
 * @category models
 */
export type RequestFailure =
  | { readonly _tag: "Transport"; readonly cause: unknown }
  | { readonly _tag: "NoHeaders" }

/**
 * An HTTP client whose connections go only to pinned, checked addresses.
 *
 * @since 0.2.0
 * @category models
 */
export interface Connector {
  /**
   * Sends a GET and gives the response once its headers arrive, or fails when they do not come within
   * `headersTimeoutMs` of real time. Interruption aborts the request; the body belongs to the scope.
   */
  readonly get: (
    url: URL,
    headers: Readonly<Record<string, string>>,
    headersTimeoutMs: number
  ) => Effect.Effect<Received, RequestFailure, Scope.Scope>
  /** Pins the checked addresses of a host name for the lifetime of the scope. */
  readonly pin: (hostname: string, addresses: ReadonlyArray<ResolvedAddress>) => Effect.Effect<void, never, Scope.Scope>
}

/** undici's Agent, as @effect/platform-node re-exports it (undici is not a dependency of ours by itself). */
type Agent = InstanceType<typeof Undici.Agent>

interface Pin {
  readonly addresses: ReadonlyArray<ResolvedAddress>
  count: number
}

/** A response's headers as one string each (undici gives a repeated header as an array). */
const flatHeaders = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) => {
  const flat: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined) flat[name.toLowerCase()] = typeof value === "string" ? value : value.join(", ")
  }
  return flat
}

/**
 * The connector: one undici Agent (keep-alive connections are reused, and each was made to a checked address)
 * whose `lookup` answers from the pins, closed with the scope. Requests go to the Agent itself: @effect/platform's
 * HttpClient over an Agent took a 100 KB loopback page 1.8x a raw request's time (its request and response models, a
 * span, a Stream over the body), most of what WebFetch added to a fetch.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeConnector: Effect.Effect<Connector, never, Scope.Scope> = Effect.gen(function*() {
  const pins = new Map<string, Pin>()
  const lookup: net.LookupFunction = (hostname, options, callback) => {
    const pin = pins.get(hostname.toLowerCase())
    if (pin === undefined) {
      const error: NodeJS.ErrnoException = Object.assign(
        new Error(`${hostname} was not resolved and checked by WebFetch`),
        { code: "ENOTFOUND" }
      )
      return options.all === true ? callback(error, []) : callback(error, "", 4)
    }
    if (options.all === true) {
      return callback(null, pin.addresses.map((a) => ({ address: a.address, family: a.family })))
    }
    const first = pin.addresses[0]!
    return callback(null, first.address, first.family)
  }
  // undici is loaded, and the Agent made, by the first fetch: a session that never fetches does not pay for them.
  // Made once in a fiber of the connector's scope: a fetch interrupted while it loads leaves the load to the next one
  // (with `Effect.cached`, every later fetch failed as interrupted). Once made, the Agent is at hand.
  const scope = yield* Effect.scope
  let ready: Agent | undefined
  const made = yield* onceInScope(
    Effect.flatMap(Effect.promise(() => import("@effect/platform-node/Undici")), (Undici) => {
      const agent = new Undici.Agent({ connect: { lookup } })
      ready = agent
      return Effect.as(Scope.addFinalizer(scope, Effect.promise(() => agent.destroy())), agent)
    }),
    scope
  )
  const agent: Effect.Effect<Agent> = Effect.suspend(() => ready === undefined ? made : Exit.succeed(ready))
  const get = (url: URL, headers: Readonly<Record<string, string>>, headersTimeoutMs: number) =>
    Effect.flatMap(agent, (agent) =>
      // The request waits interruptibly; once it answered, its body is tied to the scope before anything else runs
      // (and destroyed if an interruption came just as it answered).
      Effect.uninterruptibleMask((restore) => {
        let answered: Received | undefined
        const request = Effect.async<Received, RequestFailure>((resume) => {
          const controller = new AbortController()
          let settled = false
          const settle = (outcome: Effect.Effect<Received, RequestFailure>) => {
            if (settled) return false
            settled = true
            clearTimeout(timer)
            resume(outcome)
            return true
          }
          // Past 2^31 - 1 ms `setTimeout` fires at once: such a limit is none.
          const timer = headersTimeoutMs > MAX_TIMER_MILLIS ? undefined : setTimeout(() => {
            if (settle(Effect.fail({ _tag: "NoHeaders" }))) controller.abort()
          }, headersTimeoutMs)
          agent.request({
            origin: url.origin,
            path: url.pathname + url.search,
            method: "GET",
            headers,
            signal: controller.signal,
            // Our own timers watch the headers and the body: real time, with WebFetch's messages.
            headersTimeout: 0,
            bodyTimeout: 0
          }).then(
            (response) => {
              const received: Received = {
                status: response.statusCode,
                headers: flatHeaders(response.headers),
                body: response.body
              }
              // An error of the body before it is read is the reader's to report (it looks at `errored`), not an
              // uncaught 'error' event.
              response.body.on("error", () => {})
              if (settle(Effect.succeed(received))) answered = received
              // Too late (timed out, or interrupted): nobody will read it.
              else response.body.destroy()
            },
            (cause: unknown) => void settle(Effect.fail({ _tag: "Transport", cause }))
          )
          return Effect.sync(() => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            controller.abort()
          })
        })
        return Effect.flatMap(
          Effect.onInterrupt(restore(request), () => Effect.sync(() => answered?.body.destroy())),
          // Added to the scope itself: `Effect.addFinalizer` diffs and patches all the fiber's FiberRefs when it runs,
          // which cost a loopback fetch more than the request.
          (received) =>
            Effect.flatMap(
              Effect.scope,
              (scope) => Effect.as(Scope.addFinalizer(scope, Effect.sync(() => received.body.destroy())), received)
            )
        )
      }))
  const pin = (hostname: string, addresses: ReadonlyArray<ResolvedAddress>) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const key = hostname.toLowerCase()
        const existing = pins.get(key)
        // A later check of the same name replaces the addresses: every pinned set was checked.
        pins.set(key, { addresses, count: (existing?.count ?? 0) + 1 })
        return key
      }),
      (key) =>
        Effect.sync(() => {
          const existing = pins.get(key)
          if (existing === undefined) return
          if (existing.count <= 1) pins.delete(key)
          else existing.count--
        })
    ).pipe(Effect.asVoid)
  return { get, pin }
})

// ---------------------------------------------------------------------------------------------------------------
// addresses
// ---------------------------------------------------------------------------------------------------------------

const guardAdvice =
  "WebFetch does not connect to loopback, private, link-local or other non-public addresses unless its settings " +
  "allow them (allowPrivate)."

/**
 * The addresses a URL's host may be reached at, checked: a literal host is judged as it is; a name is resolved once
 * and every address it resolves to must pass (unless the name itself is allowed).
 *
 * @since 0.2.0
 * @category addresses
 */
export const checkedAddresses = (
  url: URL,
  policy: AddressPolicy
): Effect.Effect<ReadonlyArray<ResolvedAddress>, WebFetchError, Resolver> =>
  Effect.gen(function*() {
    const literal = literalAddress(url.hostname)
    if (literal !== undefined) {
      const refusal = policy.refusal(literal)
      if (refusal !== undefined) {
        return yield* new WebFetchError({
          reason: "BlockedAddress",
          message: `${url.host} is ${refusal}. ${guardAdvice}`
        })
      }
      return [toResolved(literal)]
    }
    const resolver = yield* Resolver
    const addresses = yield* resolver.resolve(url.hostname).pipe(
      Effect.mapError((error) =>
        new WebFetchError({
          reason: "Resolve",
          message: `The host ${url.hostname} could not be resolved (${error.message}).`
        })
      )
    )
    if (addresses.length === 0) {
      return yield* new WebFetchError({ reason: "Resolve", message: `The host ${url.hostname} has no addresses.` })
    }
    if (policy.allowsHost(url.hostname)) return addresses
    for (const { address } of addresses) {
      const refusal = policy.refusal(address)
      if (refusal !== undefined) {
        return yield* new WebFetchError({
          reason: "BlockedAddress",
          message: `${url.hostname} resolves to ${address}, ${refusal}. ${guardAdvice}`
        })
      }
    }
    return addresses
  })

// ---------------------------------------------------------------------------------------------------------------
// bodies
// ---------------------------------------------------------------------------------------------------------------

// node:http (for its status texts) and node:zlib are loaded by the first response, not at every start.
const load = createRequire(import.meta.url)
let httpModule: typeof http | undefined
let zlibModule: typeof zlib | undefined

const decompressor = (encoding: string): Duplex | undefined => {
  const inflaters = zlibModule ??= load("node:zlib") as typeof zlib
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return inflaters.createGunzip({ finishFlush: inflaters.constants.Z_SYNC_FLUSH })
    case "deflate":
      return inflaters.createInflate({ finishFlush: inflaters.constants.Z_SYNC_FLUSH })
    case "br":
      return inflaters.createBrotliDecompress({ finishFlush: inflaters.constants.BROTLI_OPERATION_FLUSH })
    default:
      return undefined
  }
}

const seconds = (duration: Duration.Duration): string => {
  const ms = Duration.toMillis(duration)
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/**
 * Reads a body within the limits, in one callback-driven reader (no Stream, no fiber): the wire's bytes counted
 * against `maxBodyBytes`, then decompressed (when the response is compressed) and gathered up to `maxDecodedBytes`.
 * At a cap the body is destroyed, so the rest is never transferred. Every chunk must arrive within `idleTimeout` of
 * real time, like the socket it watches (a TestClock does not slow a server down). Interruption destroys both
 * streams.
 */
const readBody = (
  response: Received,
  url: URL,
  limits: FetchLimits
): Effect.Effect<Body, WebFetchError> =>
  Effect.suspend(() => {
    const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase()
    const inflate = encoding === "identity" || encoding === "" ? undefined : decompressor(encoding)
    if (encoding !== "identity" && encoding !== "" && inflate === undefined) {
      response.body.destroy()
      return Effect.fail(
        new WebFetchError({
          reason: "UnsupportedContent",
          message: `${url.href} uses the content encoding ${JSON.stringify(encoding)}, which WebFetch cannot decode.`
        })
      )
    }
    const idleMs = Duration.toMillis(limits.idleTimeout)
    return Effect.async<Body, WebFetchError>((resume) => {
      const wire = response.body
      // Without compression the wire bytes are the body: both caps apply to them.
      const max = inflate === undefined ? Math.min(limits.maxBodyBytes, limits.maxDecodedBytes) : limits.maxDecodedBytes
      const parts: Array<Uint8Array> = []
      let size = 0
      let wireBytes = 0
      let cut = false
      let finished = false
      const stop = () => {
        clearTimeout(timer)
        wire.off("data", onWire).off("end", onWireEnd).off("error", onWireError)
        inflate?.off("data", onInflated).off("end", done).off("error", onInflateError).off("drain", onDrain)
        wire.destroy()
        inflate?.destroy()
      }
      const finish = (outcome: Effect.Effect<Body, WebFetchError>) => {
        if (finished) return
        finished = true
        stop()
        resume(outcome)
      }
      const done = () =>
        finish(Effect.succeed({
          bytes: concat(parts),
          wireBytes: Math.min(wireBytes, limits.maxBodyBytes),
          truncated: cut
        }))
      const failed = (message: string, reason: WebFetchError["reason"] = "Transport") =>
        finish(Effect.fail(new WebFetchError({ reason, message })))
      /** Takes a chunk of the body up to the cap; at the cap the reading ends. */
      const gather = (chunk: Uint8Array) => {
        const room = max - size
        if (chunk.length <= room) {
          parts.push(chunk)
          size += chunk.length
          return
        }
        if (room > 0) parts.push(chunk.subarray(0, room))
        size = max
        cut = true
        done()
      }
      const onIdle = () =>
        failed(`${url.href} sent nothing for ${seconds(limits.idleTimeout)}; the fetch was stopped.`, "IdleTimeout")
      // Past 2^31 - 1 ms `setTimeout` fires at once: such a limit is none.
      const timer = idleMs > MAX_TIMER_MILLIS ? undefined : setTimeout(onIdle, idleMs)
      const onWire = (chunk: Uint8Array) => {
        timer?.refresh()
        if (inflate === undefined) {
          wireBytes += chunk.length
          return gather(chunk)
        }
        const room = limits.maxBodyBytes - wireBytes
        if (chunk.length > room) {
          // The wire cap: what fits is decoded, the rest is never read.
          wireBytes = limits.maxBodyBytes
          cut = true
          // Destroying the body fails it (aborted): that is the cap's doing, not a transport error.
          wire.off("data", onWire).off("end", onWireEnd).off("error", onWireError)
          wire.destroy()
          if (room > 0) inflate.write(chunk.subarray(0, room))
          inflate.end()
          return
        }
        wireBytes += chunk.length
        // A slow decompressor holds the wire back.
        if (!inflate.write(chunk)) wire.pause()
      }
      const onDrain = () => wire.resume()
      const onWireEnd = () => (inflate === undefined ? done() : inflate.end())
      const onWireError = (cause: unknown) => failed(`Reading the body of ${url.href} failed: ${describeCause(cause)}`)
      const onInflateError = (cause: unknown) =>
        failed(`The ${encoding} body of ${url.href} could not be decoded: ${describeCause(cause)}`)
      // Decompressing is progress too: a small body that inflates for a while is not a silent server.
      const onInflated = (chunk: Uint8Array) => {
        timer?.refresh()
        gather(chunk)
      }
      wire.on("data", onWire).on("end", onWireEnd).on("error", onWireError)
      inflate?.on("data", onInflated).on("end", done).on("error", onInflateError).on("drain", onDrain)
      // A body that failed or closed before the reader came has no event left to tell it.
      if (wire.errored !== null) onWireError(wire.errored)
      else if (wire.destroyed && !wire.readableEnded) {
        failed(`Reading the body of ${url.href} failed: the connection closed before the body was read`)
      }
      return Effect.sync(() => {
        if (finished) return
        finished = true
        stop()
      })
    })
  })

/** The chunks as one buffer; one chunk is returned as it is. */
const concat = (
  chunks: ReadonlyArray<Uint8Array>
): Uint8Array => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))

const describeCause = (cause: unknown): string => {
  if (typeof cause === "object" && cause !== null) {
    const inner = "cause" in cause && cause.cause !== undefined ? cause.cause : cause
    if (typeof inner === "object" && inner !== null) {
      const code = "code" in inner && typeof inner.code === "string" ? inner.code : undefined
      const message = "message" in inner && typeof inner.message === "string" ? inner.message : undefined
      if (code !== undefined && message !== undefined && !message.includes(code)) return `${code}: ${message}`
      if (message !== undefined) return message
      if (code !== undefined) return code
    }
  }
  return String(cause)
}

// ---------------------------------------------------------------------------------------------------------------
// fetching
// ---------------------------------------------------------------------------------------------------------------

/**
 * How a fetch is made: the connector, the address policy, the limits, and which hosts keep `http:`.
 *
 * @since 0.2.0
 * @category models
 */
export interface FetchEnvironment {
  readonly connector: Connector
  readonly addresses: AddressPolicy
  readonly limits: FetchLimits
  readonly plainHttp: (hostname: string) => boolean
  readonly userAgent: string
}

const redirectStatuses: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

const statusText = (status: number): string =>
  (httpModule ??= load("node:http") as typeof http).STATUS_CODES[status] ?? ""

const requestHeaders: Readonly<Record<string, string>> = {
  accept: "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, application/json;q=0.8, " +
    "*/*;q=0.5",
  "accept-encoding": "gzip, deflate, br"
}

const requestHop = (env: FetchEnvironment, url: URL, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const addresses = yield* checkedAddresses(url, env.addresses)
    if (literalAddress(url.hostname) === undefined) {
      yield* Scope.extend(env.connector.pin(url.hostname, addresses), scope)
    }
    const response = yield* env.connector.get(
      url,
      { ...requestHeaders, "user-agent": env.userAgent },
      Duration.toMillis(env.limits.idleTimeout)
    ).pipe(
      Effect.mapError((failure) =>
        failure._tag === "NoHeaders"
          ? new WebFetchError({
            reason: "IdleTimeout",
            message: `${url.href} sent no response for ${seconds(env.limits.idleTimeout)}; the fetch was stopped.`
          })
          : new WebFetchError({
            reason: "Transport",
            message: `Fetching ${url.href} failed: ${describeCause(failure.cause)}`
          })
      ),
      Effect.provideService(Scope.Scope, scope)
    )
    return { response, addresses: addresses.map((a) => a.address) }
  })

/**
 * Fetches a normalised URL, following same-site redirects: each hop after the first is put to `checkHop` and then
 * to the address guard. Everything opened belongs to the caller's Scope; a hop that redirects is closed before the
 * next one starts.
 *
 * @since 0.2.0
 * @category fetching
 */
export const fetchFollowing = (
  env: FetchEnvironment,
  start: URL,
  checkHop: (url: URL) => Effect.Effect<HopVerdict>
): Effect.Effect<Arrived | NotFollowed, WebFetchError, Resolver | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const hops: Array<URL> = []
    let url = start
    for (let redirects = 0;; redirects++) {
      hops.push(url)
      const hopScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const { addresses, response } = yield* requestHop(env, url, hopScope)
      const status = response.status
      const location = response.headers["location"]
      if (redirectStatuses.has(status) && location !== undefined) {
        yield* Scope.close(hopScope, Exit.void)
        const next = resolveLocation(location, url, env.plainHttp)
        if (Either.isLeft(next)) {
          return yield* new WebFetchError({
            reason: "InvalidUrl",
            message: `${url.href} redirects to ${JSON.stringify(location)}, which cannot be fetched: ${next.left}`
          })
        }
        const notFollowed: NotFollowed = {
          _tag: "NotFollowed",
          from: url,
          to: next.right,
          status,
          statusText: statusText(status),
          hops: hops.slice(0, -1)
        }
        if (!isFollowedRedirect(url, next.right)) return notFollowed
        if (redirects >= env.limits.maxRedirects) {
          return yield* new WebFetchError({
            reason: "TooManyRedirects",
            message: `${start.href} redirected more than ${env.limits.maxRedirects} times; the fetch was stopped at ` +
              `${url.href}.`
          })
        }
        const verdict = yield* checkHop(next.right)
        if (verdict._tag === "Deny") {
          return yield* new WebFetchError({ reason: "PermissionDenied", message: verdict.message })
        }
        if (verdict._tag === "HandBack") {
          return notFollowed
        }
        url = next.right
        continue
      }
      return {
        _tag: "Arrived",
        url,
        status,
        statusText: statusText(status),
        headers: response.headers,
        addresses,
        hops,
        readBody: readBody(response, url, env.limits)
      } satisfies Arrived
    }
  })

const resolveLocation = (
  location: string,
  base: URL,
  plainHttp: (hostname: string) => boolean
): Either.Either<URL, string> => {
  let absolute: string
  try {
    absolute = new URL(location, base).href
  } catch {
    return Either.left("not a valid URL")
  }
  return normalizeUrl(absolute, plainHttp)
}
