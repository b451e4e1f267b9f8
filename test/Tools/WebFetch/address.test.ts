/**
 * The address classification, checked against an oracle written here in plain arithmetic: an IPv4 address is a
 * 32-bit number, an IPv6 address a 128-bit one, a range a number and a prefix length. Every IPv4 address is also
 * written in the literal forms a URL accepts (decimal, octal and hex parts; one, two, three or four parts), and
 * the guard must judge every form by the number it denotes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { literalAddress, makeAddressPolicy, nonPublicReason } from "../../../src/Tools/Web/Address.js"

// ---------------------------------------------------------------------------------------------------------------
// the oracle
// ---------------------------------------------------------------------------------------------------------------

const v4 = (dotted: string): number => dotted.split(".").reduce((n, part) => n * 256 + Number(part), 0)

/** Not public unicast IPv4: this network, private, CGNAT, loopback, link-local, IETF, documentation, 6to4 relay, benchmarking, multicast, reserved. */
const blocked4: ReadonlyArray<readonly [number, number]> = [
  [v4("0.0.0.0"), 8],
  [v4("10.0.0.0"), 8],
  [v4("100.64.0.0"), 10],
  [v4("127.0.0.0"), 8],
  [v4("169.254.0.0"), 16],
  [v4("172.16.0.0"), 12],
  [v4("192.0.0.0"), 24],
  [v4("192.0.2.0"), 24],
  [v4("192.88.99.0"), 24],
  [v4("192.168.0.0"), 16],
  [v4("198.18.0.0"), 15],
  [v4("198.51.100.0"), 24],
  [v4("203.0.113.0"), 24],
  [v4("224.0.0.0"), 4],
  [v4("240.0.0.0"), 4]
]

const inRange4 = (n: number, [network, prefix]: readonly [number, number]) =>
  Math.floor(n / 2 ** (32 - prefix)) === Math.floor(network / 2 ** (32 - prefix))
const oracle4 = (n: number): boolean => blocked4.some((range) => inRange4(n, range))

const hextets = (h: ReadonlyArray<number>): bigint => h.reduce((n, x) => n * 65536n + BigInt(x), 0n)
const inRange6 = (n: bigint, network: bigint, prefix: number) =>
  n >> BigInt(128 - prefix) === network >> BigInt(128 - prefix)

const oracle6 = (h: ReadonlyArray<number>): boolean => {
  const n = hextets(h)
  if (inRange6(n, hextets([0, 0, 0, 0, 0, 0xffff, 0, 0]), 96)) return true // IPv4-mapped
  if (inRange6(n, 0n, 96)) return true // unspecified, loopback, IPv4-compatible
  if (inRange6(n, hextets([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]), 96)) return oracle4(Number(n & 0xffffffffn)) // NAT64
  if (inRange6(n, hextets([0x2002, 0, 0, 0, 0, 0, 0, 0]), 16)) return oracle4(h[1]! * 65536 + h[2]!) // 6to4
  const ranges: ReadonlyArray<readonly [ReadonlyArray<number>, number]> = [
    [[0x100, 0, 0, 0, 0, 0, 0, 0], 64],
    [[0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32],
    [[0xfc00, 0, 0, 0, 0, 0, 0, 0], 7],
    [[0xfe80, 0, 0, 0, 0, 0, 0, 0], 10],
    [[0xfec0, 0, 0, 0, 0, 0, 0, 0], 10],
    [[0xff00, 0, 0, 0, 0, 0, 0, 0], 8]
  ]
  return ranges.some(([network, prefix]) => inRange6(n, hextets(network), prefix))
}

// ---------------------------------------------------------------------------------------------------------------
// generators
// ---------------------------------------------------------------------------------------------------------------

const uint32 = fc.integer({ min: 0, max: 2 ** 32 - 1 })

/** Addresses inside each blocked range, at its edges and just outside them, and anywhere at all. */
const address4 = fc.oneof(
  uint32,
  fc.constantFrom(...blocked4).chain(([network, prefix]) => {
    const size = 2 ** (32 - prefix)
    return fc.oneof(
      fc.integer({ min: 0, max: size - 1 }).map((offset) => network + offset),
      fc.constantFrom(network, network + size - 1, network - 1, network + size).filter((n) => n >= 0 && n < 2 ** 32)
    )
  })
)

const inBase = (
  value: number,
  base: 8 | 10 | 16
): string => (base === 10 ? String(value) : base === 8 ? `0${value.toString(8)}` : `0x${value.toString(16)}`)

/** The literal forms of an address: 4, 3, 2 or 1 parts, each in decimal, octal or hex. */
const literalForm = (n: number) =>
  fc.tuple(
    fc.constantFrom(1, 2, 3, 4),
    fc.array(fc.constantFrom(8 as const, 10 as const, 16 as const), { minLength: 4, maxLength: 4 })
  ).map(([parts, bases]) => {
    const a = Math.floor(n / 2 ** 24)
    const b = Math.floor(n / 2 ** 16) % 256
    const c = Math.floor(n / 256) % 256
    const d = n % 256
    const values = parts === 4 ? [a, b, c, d] : parts === 3 ? [a, b, c * 256 + d] : parts === 2 ? [a, n % 2 ** 24] : [n]
    return values.map((value, i) => inBase(value, bases[i]!)).join(".")
  })

const hextet = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constant(0), fc.constant(0xffff))
const firstHextet = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }),
  fc.constantFrom(0, 0x64, 0x100, 0x2001, 0x2002, 0xfc00, 0xfdab, 0xfe80, 0xfebf, 0xfec0, 0xff02, 0x2606)
)
const address6 = fc.oneof(
  fc.tuple(firstHextet, hextet, hextet, hextet, hextet, hextet, hextet, hextet),
  // The special low ranges: mapped, compatible, NAT64 and 6to4 forms around an interesting IPv4 address.
  fc.tuple(fc.constantFrom("mapped", "compatible", "nat64", "6to4"), address4).map(([kind, n]): Array<number> => {
    const high = Math.floor(n / 65536)
    const low = n % 65536
    switch (kind) {
      case "mapped":
        return [0, 0, 0, 0, 0, 0xffff, high, low]
      case "compatible":
        return [0, 0, 0, 0, 0, 0, high, low]
      case "nat64":
        return [0x64, 0xff9b, 0, 0, 0, 0, high, low]
      default:
        return [0x2002, high, low, 0, 0, 0, 0, 1]
    }
  })
)

const format6 = (h: ReadonlyArray<number>) => h.map((x) => x.toString(16)).join(":")

// ---------------------------------------------------------------------------------------------------------------
// properties
// ---------------------------------------------------------------------------------------------------------------

describe("Address classification", () => {
  it.prop("every literal form of an IPv4 address is judged by the address it denotes", [
    address4.chain((n) => fc.tuple(fc.constant(n), literalForm(n)))
  ], ([[n, form]]) => {
    const literal = literalAddress(new URL(`http://${form}/`).hostname)
    expect(literal).toBeDefined()
    expect(nonPublicReason(literal!) !== undefined, `${form} (${n})`).toBe(oracle4(n))
  })

  it.prop("IPv6 addresses, with their IPv4 embeddings, are judged as the oracle says", [address6], ([h]) => {
    const hostname = new URL(`http://[${format6(h)}]/`).hostname
    const literal = literalAddress(hostname)
    expect(literal).toBeDefined()
    expect(nonPublicReason(literal!) !== undefined, format6(h)).toBe(oracle6(h))
  })

  it.prop("every IPv4-mapped address is refused, public or not", [uint32], ([n]) => {
    const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")
    const literal = literalAddress(new URL(`http://[::ffff:${dotted}]/`).hostname)
    expect(nonPublicReason(literal!)).toBe("an IPv4-mapped address (::ffff:0:0/96)")
  })

  it.prop("an allowed range lets exactly its own addresses through", [
    address4,
    fc.integer({ min: 8, max: 32 }),
    address4
  ], ([network, prefix, n]) => {
    const base = Math.floor(network / 2 ** (32 - prefix)) * 2 ** (32 - prefix)
    const dotted = (x: number) =>
      [Math.floor(x / 2 ** 24), Math.floor(x / 65536) % 256, Math.floor(x / 256) % 256, x % 256].join(".")
    const policy = Either.getOrThrow(makeAddressPolicy([`${dotted(base)}/${prefix}`]))
    const allowed = policy.refusal(dotted(n)) === undefined
    expect(allowed).toBe(!oracle4(n) || inRange4(n, [base, prefix]))
  })

  it("generators reach both sides of every range", () => {
    const samples = fc.sample(address4, 5000)
    for (const range of blocked4) expect(samples.some((n) => inRange4(n, range)), String(range)).toBe(true)
    expect(samples.some((n) => !oracle4(n))).toBe(true)
    const forms = fc.sample(address4.chain(literalForm), 500)
    for (const pattern of [/^\d+$/, /^0x/, /^0[0-7]/, /^[^.]+\.[^.]+$/, /^[^.]+\.[^.]+\.[^.]+$/]) {
      expect(forms.some((f) => pattern.test(f)), String(pattern)).toBe(true)
    }
    const v6 = fc.sample(address6, 2000)
    expect(v6.filter(oracle6).length).toBeGreaterThan(200)
    expect(v6.filter((h) => !oracle6(h)).length).toBeGreaterThan(200)
  })

  it("names are not literals; literals are written canonically by the URL parser", () => {
    expect(literalAddress("example.com")).toBeUndefined()
    expect(literalAddress("127.0.0.1.nip.io")).toBeUndefined()
    expect(new URL("http://0x7f.1/").hostname).toBe("127.0.0.1")
    expect(literalAddress("[::ffff:7f00:1]")).toBe("::ffff:7f00:1")
  })
})
