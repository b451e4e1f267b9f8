/**
 * Name resolution for WebFetch. The fetcher asks the Resolver once per hop, checks every address it answers, and
 * connects to the address it checked: nothing else resolves the name again, so a DNS answer that changes between
 * the check and the connection (rebinding) cannot redirect the socket.
 *
 * `Resolver.layer` uses the system resolver (`getaddrinfo`, so `/etc/hosts` counts); `Resolver.layerStatic` answers
 * from a table, for tests and for pinning names.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as dns from "node:dns"
import * as net from "node:net"

/**
 * One address a name resolved to.
 *
 * @since 0.2.0
 * @category models
 */
export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/**
 * A name that did not resolve.
 *
 * @since 0.2.0
 * @category errors
 */
export class ResolveError
  extends Data.TaggedError("ResolveError")<{ readonly hostname: string; readonly message: string }>
{}

/**
 * The Resolver service.
 *
 * @since 0.2.0
 * @category tags
 */
export class Resolver extends Context.Tag("effect-tool-runtime/Tools/Web/Resolver")<
  Resolver,
  { readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<ResolvedAddress>, ResolveError> }
>() {
  /**
   * The system resolver (`dns.lookup` with every address, in the order the system gives them), as a service.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly system: Context.Tag.Service<Resolver> = {
    resolve: (hostname) =>
      Effect.async<ReadonlyArray<ResolvedAddress>, ResolveError>((resume) => {
        dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
          if (error !== null) resume(Effect.fail(new ResolveError({ hostname, message: error.code ?? error.message })))
          else resume(Effect.succeed(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))))
        })
      })
  }

  /**
   * The system resolver (`dns.lookup` with every address, in the order the system gives them).
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer: Layer.Layer<Resolver> = Layer.succeed(Resolver, Resolver.system)

  /**
   * Answers from a table (`{ "example.test": ["127.0.0.1"] }`); a name not in it does not resolve.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layerStatic = (table: Readonly<Record<string, ReadonlyArray<string>>>): Layer.Layer<Resolver> =>
    Layer.succeed(Resolver, {
      resolve: (hostname) => {
        const addresses = table[hostname.toLowerCase()]
        return addresses === undefined || addresses.length === 0
          ? Effect.fail(new ResolveError({ hostname, message: "ENOTFOUND" }))
          : Effect.succeed(addresses.map(toResolved))
      }
    })
}

/**
 * An address string as a {@link ResolvedAddress}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const toResolved = (address: string): ResolvedAddress => ({ address, family: net.isIPv6(address) ? 6 : 4 })
