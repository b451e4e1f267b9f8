/**
 * The content of `WebFetch(...)` rules: `domain:HOST`.
 *
 * - `domain:example.com` matches exactly the host `example.com` (as Claude Code does): not `www.example.com`,
 *   not `example.com.evil.net`.
 * - `domain:*.example.com` matches any subdomain at any depth (`a.example.com`, `a.b.example.com`) but not
 *   `example.com` itself; write both rules to cover both.
 * - `domain:*` matches every host.
 *
 * Hosts are compared case-insensitively, after IDNA (punycode) normalisation and without a trailing dot.
 * Scheme, port, path and credentials play no part. Only `http:` and `https:` URLs can match, and a URL that
 * does not parse never matches: an allow rule can never be satisfied by something we cannot read.
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import * as Option from "effect/Option"
import { domainToASCII } from "node:url"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * A parsed `domain:` rule content.
 *
 * @since 0.1.0
 * @category models
 */
export type DomainPattern =
  | { readonly _tag: "AnyHost" }
  | { readonly _tag: "ExactHost"; readonly host: string }
  | { readonly _tag: "Subdomains"; readonly parent: string }

const PREFIX = "domain:"

const normalizeHost = (host: string): string | undefined => {
  const trimmed = host.trim().replace(/\.$/, "").toLowerCase()
  if (trimmed === "") return undefined
  // IPv6 literals are kept as the URL parser writes them, with brackets.
  if (trimmed.startsWith("[")) return trimmed
  const ascii = domainToASCII(trimmed)
  return ascii === "" ? undefined : ascii
}

// -----------------------------------------------------------------------------
// parsing
// -----------------------------------------------------------------------------

/**
 * Parses `domain:example.com`, `domain:*.example.com` or `domain:*`. Anything else (no `domain:` prefix,
 * an empty or invalid host, a `*` anywhere but as the whole first label) is `None`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseDomainPattern = (content: string): Option.Option<DomainPattern> => {
  if (!content.startsWith(PREFIX)) return Option.none()
  const host = content.slice(PREFIX.length).trim()
  if (host === "*") return Option.some({ _tag: "AnyHost" })
  const subdomains = host.startsWith("*.")
  const rest = subdomains ? host.slice(2) : host
  if (rest.includes("*") || rest.includes("/") || (rest.includes(":") && !rest.startsWith("["))) {
    return Option.none()
  }
  const normalized = normalizeHost(rest)
  if (normalized === undefined) return Option.none()
  return Option.some(subdomains ? { _tag: "Subdomains", parent: normalized } : { _tag: "ExactHost", host: normalized })
}

// -----------------------------------------------------------------------------
// matching
// -----------------------------------------------------------------------------

/**
 * The normalised host of an `http:`/`https:` URL, or `None` when the URL does not parse or has another scheme.
 *
 * @since 0.1.0
 * @category matching
 */
export const urlHost = (url: string): Option.Option<string> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Option.none()
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return Option.none()
  return Option.fromNullable(normalizeHost(parsed.hostname))
}

/**
 * Whether a parsed domain pattern covers a normalised host.
 *
 * @since 0.1.0
 * @category matching
 */
export const domainPatternMatchesHost = (pattern: DomainPattern, host: string): boolean => {
  switch (pattern._tag) {
    case "AnyHost":
      return true
    case "ExactHost":
      return host === pattern.host
    case "Subdomains":
      return host.endsWith(`.${pattern.parent}`)
  }
}

/**
 * Whether the content of a `WebFetch(...)` rule (`domain:example.com`) matches a URL. Malformed content or a
 * malformed URL never matches.
 *
 * @since 0.1.0
 * @category matching
 */
export const matchDomainRule: {
  (url: string): (content: string) => boolean
  (content: string, url: string): boolean
} = dual(2, (content: string, url: string): boolean => {
  const pattern = parseDomainPattern(content)
  const host = urlHost(url)
  return Option.isSome(pattern) && Option.isSome(host) && domainPatternMatchesHost(pattern.value, host.value)
})
