/**
 * What WebFetch does to a URL before any rule, cache or socket sees it: parse it with the WHATWG parser (which
 * lower-cases the host, converts it to punycode and writes every IPv4 literal form as a dotted quad), refuse
 * other schemes, credentials and very long URLs, drop the fragment and a trailing dot of the host, and upgrade
 * `http:` to `https:` unless the host may be reached in plain text.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"

/**
 * The longest URL WebFetch accepts (Claude Code's limit).
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_URL_LENGTH = 2000

/**
 * Normalises a URL for fetching; the left side is a message for the model. `plainHttp` says which hosts keep
 * `http:`.
 *
 * @since 0.2.0
 * @category normalisation
 */
export const normalizeUrl = (raw: string, plainHttp: (hostname: string) => boolean): Either.Either<URL, string> => {
  const text = raw.trim()
  if (text.length > MAX_URL_LENGTH) return Either.left(`The URL is longer than ${MAX_URL_LENGTH} characters.`)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return Either.left(`${JSON.stringify(text)} is not a valid absolute URL.`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(`Only http: and https: URLs can be fetched, not ${url.protocol}`)
  }
  if (url.username !== "" || url.password !== "") {
    return Either.left("URLs with a user name or password are not fetched.")
  }
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.slice(0, -1)
  if (url.hostname === "") return Either.left(`${JSON.stringify(text)} has no host.`)
  url.hash = ""
  if (url.protocol === "http:" && !plainHttp(url.hostname)) url.protocol = "https:"
  return Either.right(url)
}

/**
 * Whether two hosts are the same site for redirects: equal, or one is the other with `www.` in front.
 *
 * @since 0.2.0
 * @category redirects
 */
export const sameSite = (a: string, b: string): boolean => a === b || a === `www.${b}` || b === `www.${a}`

/**
 * Whether a redirect from `from` to `to` is followed: same scheme, same port, no credentials, and the same host or
 * its `www.` twin. Anything else goes back to the model, so rules and the person see the new host.
 *
 * @since 0.2.0
 * @category redirects
 */
export const isFollowedRedirect = (from: URL, to: URL): boolean =>
  from.protocol === to.protocol && from.port === to.port && to.username === "" && to.password === "" &&
  sameSite(from.hostname, to.hostname)
