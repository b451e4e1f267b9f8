/**
 * Which network addresses WebFetch may connect to. By default only public unicast addresses: loopback, private
 * (RFC 1918), link-local (169.254.0.0/16, where cloud metadata lives), CGNAT, "this network" (`0.0.0.0/8`),
 * documentation, benchmarking, multicast and reserved ranges are refused, and so are their IPv6 counterparts
 * (unspecified, loopback, unique-local, link-local, site-local, multicast, documentation, IPv4-compatible and
 * IPv4-mapped addresses). NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are judged by the IPv4 address
 * they embed.
 *
 * Literal hosts reach this module already canonical: the WHATWG URL parser writes `2130706433`, `0x7f.1`,
 * `017700000001` and `127.1` as `127.0.0.1`, and `[::ffff:127.0.0.1]` as `[::ffff:7f00:1]`; a host the URL parser
 * does not read as an address is a name, which the {@link Resolver} resolves and this module then judges.
 *
 * The person may allow named hosts (`intranet.example`) or addresses and ranges (`127.0.0.1`, `10.0.0.0/8`,
 * `fd00::/8`) with {@link AddressPolicy}'s `allowPrivate`.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as net from "node:net"

// ---------------------------------------------------------------------------------------------------------------
// ranges
// ---------------------------------------------------------------------------------------------------------------

/**
 * IPv4 ranges that are not public unicast, with the reason shown to the model.
 *
 * @since 0.2.0
 * @category ranges
 */
export const blockedIPv4: ReadonlyArray<readonly [network: string, prefix: number, reason: string]> = [
  ["0.0.0.0", 8, "a 'this network' address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (CGNAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "an IETF protocol address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.88.99.0", 24, "a 6to4 relay address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"]
]

/**
 * IPv6 ranges that are not public unicast (besides NAT64 and 6to4 addresses embedding a blocked IPv4 address).
 *
 * @since 0.2.0
 * @category ranges
 */
export const blockedIPv6: ReadonlyArray<readonly [network: string, prefix: number, reason: string]> = [
  ["::", 128, "the unspecified address"],
  ["::1", 128, "a loopback address"],
  ["::ffff:0:0", 96, "an IPv4-mapped address"],
  ["::", 96, "an IPv4-compatible address"],
  ["100::", 64, "a discard address"],
  ["2001:db8::", 32, "a documentation address"],
  ["fc00::", 7, "a unique-local address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"]
]

type Subnet = readonly [network: string, prefix: number, type: "ipv4" | "ipv6"]

interface BlockRule {
  readonly subnets: ReadonlyArray<Subnet>
  readonly reason: string
}

const embedded = ([network, prefix]: readonly [string, number, string]): ReadonlyArray<Subnet> => {
  const [a, b, c, d] = network.split(".").map(Number) as [number, number, number, number]
  const hex = (x: number, y: number) => ((x << 8) | y).toString(16)
  return [[`64:ff9b::${network}`, 96 + prefix, "ipv6"], [`2002:${hex(a, b)}:${hex(c, d)}::`, 16 + prefix, "ipv6"]]
}

// One family per list: a BlockList matches IPv4 rules against IPv6 addresses too (and the other way round), which
// would blur the reasons and the families' rules.
const rules4: ReadonlyArray<BlockRule> = blockedIPv4.map(([network, prefix, reason]) => ({
  subnets: [[network, prefix, "ipv4"]],
  reason: `${reason} (${network}/${prefix})`
}))
const rules6: ReadonlyArray<BlockRule> = [
  ...blockedIPv6.map(([network, prefix, reason]): BlockRule => ({
    subnets: [[network, prefix, "ipv6"]],
    reason: `${reason} (${network}/${prefix})`
  })),
  ...blockedIPv4.map((entry): BlockRule => ({
    subnets: embedded(entry),
    reason: `an address embedding ${entry[2]} (${entry[0]}/${entry[1]}) through NAT64 or 6to4`
  }))
]

const listOf = (subnets: ReadonlyArray<Subnet>): net.BlockList => {
  const list = new net.BlockList()
  for (const [network, prefix, type] of subnets) list.addSubnet(network, prefix, type)
  return list
}

interface FamilyLists {
  /** Every blocked subnet of the family in one list, so the common case (a public address) is one check. */
  readonly any: net.BlockList
  readonly rules: ReadonlyArray<{ readonly list: net.BlockList; readonly reason: string }>
}

const familyLists = (rules: ReadonlyArray<BlockRule>): FamilyLists => ({
  any: listOf(rules.flatMap((rule) => rule.subnets)),
  rules: rules.map((rule) => ({ list: listOf(rule.subnets), reason: rule.reason }))
})

// Built at the first check, not at start: a run that fetches nothing never pays for a hundred BlockLists.
let lists: { readonly ipv4: FamilyLists; readonly ipv6: FamilyLists } | undefined
const blockLists = () => lists ??= { ipv4: familyLists(rules4), ipv6: familyLists(rules6) }

// ---------------------------------------------------------------------------------------------------------------
// classification
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why an address is not public, or `undefined` for a public unicast address. An address that does not parse is not
 * public either.
 *
 * @since 0.2.0
 * @category classification
 */
export const nonPublicReason = (address: string): string | undefined => {
  const family = net.isIP(address)
  if (family === 0) return "not an IP address"
  // The IPv4-mapped range is refused by its own rule, so an IPv4 rule never has to see through the mapping.
  const type = family === 4 ? "ipv4" : "ipv6"
  const { any, rules } = blockLists()[type]
  // One SocketAddress for every list: `check` of a string builds one per call (and answers "not in the list" for an
  // address it cannot build, where an address that cannot be checked is not public).
  let socketAddress: net.SocketAddress
  try {
    socketAddress = new net.SocketAddress({ address, family: type })
  } catch {
    return "an address that cannot be checked"
  }
  if (!any.check(socketAddress)) return undefined
  for (const rule of rules) if (rule.list.check(socketAddress)) return rule.reason
  return "a non-public address"
}

/**
 * The address a URL host names literally (`127.0.0.1`, `[::1]` without brackets), or `undefined` for a name.
 *
 * @since 0.2.0
 * @category classification
 */
export const literalAddress = (hostname: string): string | undefined => {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  return net.isIP(bare) === 0 ? undefined : bare
}

// ---------------------------------------------------------------------------------------------------------------
// the policy
// ---------------------------------------------------------------------------------------------------------------

/**
 * What may be reached besides public addresses: host names (exact, case-insensitive) and addresses or CIDR ranges.
 *
 * @since 0.2.0
 * @category models
 */
export interface AddressPolicy {
  /** Whether a host name is allowed whatever it resolves to. */
  readonly allowsHost: (hostname: string) => boolean
  /** Why this address may not be reached, or `undefined` when it may. */
  readonly refusal: (address: string) => string | undefined
}

/**
 * An entry of `allowPrivate` that is neither a host name nor an address or range.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidAllowEntry extends Data.TaggedError("InvalidAllowEntry")<{ readonly message: string }> {}

/**
 * The policy for an `allowPrivate` list: `"localhost"`, `"127.0.0.1"`, `"10.0.0.0/8"`, `"::1"`, `"fd00::/8"`.
 * Fails with {@link InvalidAllowEntry} for an entry that is none of these (a setting is checked once, at start).
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeAddressPolicy = (
  allowPrivate: ReadonlyArray<string>
): Either.Either<AddressPolicy, InvalidAllowEntry> => {
  const hosts = new Set<string>()
  // Made for the first range: most settings allow none.
  let ranges: net.BlockList | undefined
  for (const raw of allowPrivate) {
    const entry = raw.trim().toLowerCase()
    const [network = "", prefixText] = entry.split("/")
    const bare = literalAddress(network)
    if (bare !== undefined) {
      const family = net.isIP(bare) === 4 ? "ipv4" : "ipv6"
      const max = family === "ipv4" ? 32 : 128
      const prefix = prefixText === undefined ? max : Number(prefixText)
      if (
        !Number.isInteger(prefix) || prefix < 0 || prefix > max ||
        (prefixText !== undefined && !/^\d+$/.test(prefixText))
      ) {
        return Either.left(
          new InvalidAllowEntry({ message: `allowPrivate: ${JSON.stringify(raw)} has an invalid prefix length` })
        )
      }
      ranges ??= new net.BlockList()
      ranges.addSubnet(bare, prefix, family)
    } else if (
      prefixText === undefined && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)
    ) {
      hosts.add(entry.replace(/\.$/, ""))
    } else {
      return Either.left(
        new InvalidAllowEntry({
          message: `allowPrivate: ${JSON.stringify(raw)} is neither a host name nor an address or CIDR range`
        })
      )
    }
  }
  return Either.right({
    allowsHost: (hostname) => hosts.has(hostname.toLowerCase().replace(/\.$/, "")),
    // An allowed range is one check; only an address it does not cover is classified.
    refusal: (address) => {
      const family = net.isIP(address)
      if (family !== 0 && ranges?.check(address, family === 4 ? "ipv4" : "ipv6") === true) return undefined
      return nonPublicReason(address)
    }
  })
}
