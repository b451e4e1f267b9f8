/**
 * The guarded HTTP fetch behind WebFetch, through @effect/platform's HttpClient on undici.
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
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as http from "node:http"
import { createRequire } from "node:module"
import type * as net from "node:net"
import type { Duplex } from "node:stream"
import type * as zlib from "node:zlib"
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
 * An HTTP client whose connections go only to pinned, checked addresses.
 *
 * @since 0.2.0
 * @category models
 */
export interface Connector {
  /** Sends a request; the response lives as long as the scope. */
  readonly execute: (
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, Scope.Scope>
  /** Pins the checked addresses of a host name for the lifetime of the scope. */
  readonly pin: (hostname: string, addresses: ReadonlyArray<ResolvedAddress>) => Effect.Effect<void, never, Scope.Scope>
}

interface Pin {
  readonly addresses: ReadonlyArray<ResolvedAddress>
  count: number
}

/**
 * The connector: one undici Agent (keep-alive connections are reused, and each was made to a checked address)
 * whose `lookup` answers from the pins, closed with the scope.
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
  const scope = yield* Effect.scope
  const client = yield* Effect.cached(Effect.gen(function*() {
    const [Undici, NodeHttpClient] = yield* Effect.promise(() =>
      Promise.all([import("@effect/platform-node/Undici"), import("@effect/platform-node/NodeHttpClient")])
    )
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new Undici.Agent({ connect: { lookup } })),
      (agent) => Effect.promise(() => agent.destroy())
    ).pipe(Scope.extend(scope))
    return HttpClient.withScope(NodeHttpClient.makeUndici(agent))
  }))
  const execute = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.flatMap(client, (http) => http.execute(request))
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
  return { execute, pin }
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

/** Chunks gathered up to a cap; `cut` when a chunk did not fit (there was more than the cap). */
interface Gathered {
  size: number
  readonly parts: Array<Uint8Array>
  cut: boolean
}

/**
 * Gathers a stream's bytes up to `max`, then stops pulling (the rest is never read). One fold, no per-chunk
 * operators: on a loopback server a chain of stream operators costs several times the transfer itself.
 */
const gatherUpTo = <E, R>(
  stream: Stream.Stream<Uint8Array, E, R>,
  max: number,
  onChunk: (chunk: Uint8Array) => void
): Effect.Effect<Gathered, E, R> =>
  Stream.runFoldWhile(stream, { size: 0, parts: [], cut: false } as Gathered, (state) => !state.cut, (state, chunk) => {
    onChunk(chunk)
    const room = max - state.size
    if (chunk.length <= room) {
      state.parts.push(chunk)
      state.size += chunk.length
    } else {
      if (room > 0) state.parts.push(chunk.subarray(0, room))
      state.size = max
      state.cut = true
    }
    return state
  })

/** Passes at most `max` bytes, then ends the stream (so the rest is never pulled); `onCut` when something was left. */
const capBytes = <E, R>(
  stream: Stream.Stream<Uint8Array, E, R>,
  max: number,
  onChunk: (chunk: Uint8Array) => void,
  onCut: () => void
): Stream.Stream<Uint8Array, E, R> =>
  Stream.suspend(() => {
    let cut = false
    return stream.pipe(
      Stream.mapAccum(0, (seen, chunk: Uint8Array): [number, Uint8Array] => {
        onChunk(chunk)
        const room = max - seen
        if (chunk.length <= room) return [seen + chunk.length, chunk]
        cut = true
        onCut()
        return [max, chunk.subarray(0, room)]
      }),
      Stream.takeUntil(() => cut)
    )
  })

/**
 * Runs `effect` and fails with `onIdle()` when `millis` of real time pass without a call of `touch`. One timer,
 * refreshed on each touch (a per-chunk Effect timeout forks a fiber per chunk). Real time, like the socket it
 * watches: a TestClock does not slow a server down.
 */
const failWhenIdle = <A, E, E2, R>(
  run: (touch: () => void) => Effect.Effect<A, E, R>,
  millis: number,
  onIdle: () => E2
): Effect.Effect<A, E | E2, R> =>
  Effect.suspend(() => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const idle = Effect.async<never, E2>((resume) => {
      timer = setTimeout(() => resume(Effect.fail(onIdle())), millis)
      return Effect.sync(() => clearTimeout(timer))
    })
    return Effect.raceFirst(run(() => void timer?.refresh()), idle)
  })

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

const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  url: URL,
  limits: FetchLimits
): Effect.Effect<Body, WebFetchError> =>
  Effect.suspend(() => {
    const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase()
    const inflate = encoding === "identity" || encoding === "" ? undefined : decompressor(encoding)
    if (encoding !== "identity" && encoding !== "" && inflate === undefined) {
      return Effect.fail(
        new WebFetchError({
          reason: "UnsupportedContent",
          message: `${url.href} uses the content encoding ${JSON.stringify(encoding)}, which WebFetch cannot decode.`
        })
      )
    }
    let wireBytes = 0
    let wireCut = false
    const transport = (cause: unknown) =>
      new WebFetchError({
        reason: "Transport",
        message: `Reading the body of ${url.href} failed: ${describeCause(cause)}`
      })
    const wire = Stream.mapError(response.stream, transport)
    const gathered = (touch: () => void): Effect.Effect<Gathered, WebFetchError> => {
      const onWire = (chunk: Uint8Array) => {
        touch()
        wireBytes += chunk.length
      }
      // Without compression the wire bytes are the body: both caps apply to them.
      if (inflate === undefined) return gatherUpTo(wire, Math.min(limits.maxBodyBytes, limits.maxDecodedBytes), onWire)
      const decoded = NodeStream.pipeThroughDuplex(
        capBytes(wire, limits.maxBodyBytes, onWire, () => (wireCut = true)),
        () => inflate,
        (cause) =>
          cause instanceof WebFetchError
            ? cause
            : new WebFetchError({
              reason: "Transport",
              message: `The ${encoding} body of ${url.href} could not be decoded: ${describeCause(cause)}`
            })
      )
      return gatherUpTo(decoded, limits.maxDecodedBytes, () => {})
    }
    return failWhenIdle(
      gathered,
      Duration.toMillis(limits.idleTimeout),
      () =>
        new WebFetchError({
          reason: "IdleTimeout",
          message: `${url.href} sent nothing for ${seconds(limits.idleTimeout)}; the fetch was stopped.`
        })
    ).pipe(
      Effect.map((body) => ({
        bytes: concat(body.parts),
        wireBytes: Math.min(wireBytes, limits.maxBodyBytes),
        truncated: body.cut || wireCut
      }))
    )
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

const requestHop = (env: FetchEnvironment, url: URL, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const addresses = yield* checkedAddresses(url, env.addresses)
    if (literalAddress(url.hostname) === undefined) {
      yield* Scope.extend(env.connector.pin(url.hostname, addresses), scope)
    }
    const request = HttpClientRequest.get(url).pipe(
      HttpClientRequest.setHeaders({
        accept:
          "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, application/json;q=0.8, " +
          "*/*;q=0.5",
        "accept-encoding": "gzip, deflate, br",
        "user-agent": env.userAgent
      })
    )
    const response = yield* env.connector.execute(request).pipe(
      Effect.mapError((error) =>
        new WebFetchError({ reason: "Transport", message: `Fetching ${url.href} failed: ${describeCause(error)}` })
      ),
      Effect.timeoutFail({
        duration: env.limits.idleTimeout,
        onTimeout: () =>
          new WebFetchError({
            reason: "IdleTimeout",
            message: `${url.href} sent no response for ${seconds(env.limits.idleTimeout)}; the fetch was stopped.`
          })
      }),
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
