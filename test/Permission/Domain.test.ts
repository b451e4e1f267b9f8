import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Option } from "effect"
import { matchDomainRule, parseDomainPattern } from "../../src/Permission/Domain.js"

describe("matchDomainRule", () => {
  it("matches exactly the named host, on any scheme, port or path", () => {
    expect(matchDomainRule("domain:example.com", "https://example.com/docs?q=1")).toBe(true)
    expect(matchDomainRule("domain:example.com", "http://example.com:8080/")).toBe(true)
    expect(matchDomainRule("domain:example.com", "https://user:pw@example.com/")).toBe(true)
  })

  it("does not match subdomains, parents or look-alike hosts", () => {
    expect(matchDomainRule("domain:example.com", "https://www.example.com/")).toBe(false)
    expect(matchDomainRule("domain:www.example.com", "https://example.com/")).toBe(false)
    expect(matchDomainRule("domain:example.com", "https://example.com.evil.net/")).toBe(false)
    expect(matchDomainRule("domain:example.com", "https://evilexample.com/")).toBe(false)
    expect(matchDomainRule("domain:example.com", "https://evil.net/?u=https://example.com")).toBe(false)
    expect(matchDomainRule("domain:example.com", "https://example.com@evil.net/")).toBe(false)
  })

  it("*.host matches subdomains at any depth but not the host itself", () => {
    expect(matchDomainRule("domain:*.example.com", "https://a.example.com/")).toBe(true)
    expect(matchDomainRule("domain:*.example.com", "https://a.b.example.com/")).toBe(true)
    expect(matchDomainRule("domain:*.example.com", "https://example.com/")).toBe(false)
    expect(matchDomainRule("domain:*.example.com", "https://badexample.com/")).toBe(false)
  })

  it("domain:* matches any http(s) host", () => {
    expect(matchDomainRule("domain:*", "https://anything.test/")).toBe(true)
    expect(matchDomainRule("domain:*", "not a url")).toBe(false)
  })

  it("compares hosts case-insensitively, ignoring a trailing dot, after IDNA normalisation", () => {
    expect(matchDomainRule("domain:Example.COM", "https://EXAMPLE.com/")).toBe(true)
    expect(matchDomainRule("domain:example.com", "https://example.com./")).toBe(true)
    expect(matchDomainRule("domain:bücher.de", "https://xn--bcher-kva.de/")).toBe(true)
    expect(matchDomainRule("domain:xn--bcher-kva.de", "https://bücher.de/")).toBe(true)
  })

  it("matches IP literals", () => {
    expect(matchDomainRule("domain:127.0.0.1", "http://127.0.0.1:3000/")).toBe(true)
    expect(matchDomainRule("domain:[::1]", "http://[::1]:3000/")).toBe(true)
  })

  it("never matches a malformed URL or a non-http scheme", () => {
    expect(matchDomainRule("domain:example.com", "example.com")).toBe(false)
    expect(matchDomainRule("domain:example.com", "https://")).toBe(false)
    expect(matchDomainRule("domain:example.com", "")).toBe(false)
    expect(matchDomainRule("domain:example.com", "ftp://example.com/")).toBe(false)
    expect(matchDomainRule("domain:example.com", "file://example.com/etc/passwd")).toBe(false)
  })

  it("never matches malformed content", () => {
    expect(matchDomainRule("example.com", "https://example.com/")).toBe(false)
    expect(matchDomainRule("domain:", "https://example.com/")).toBe(false)
    expect(matchDomainRule("domain:exa*.com", "https://example.com/")).toBe(false)
    expect(matchDomainRule("domain:example.com/path", "https://example.com/path")).toBe(false)
    expect(Option.isNone(parseDomainPattern("domain:a.*.com"))).toBe(true)
  })

  it("is dual", () => {
    expect(["domain:a.test", "domain:b.test"].filter(matchDomainRule("https://b.test/"))).toEqual(["domain:b.test"])
  })

  it.prop("an exact rule matches a URL iff the hosts are equal", [
    fc.domain(),
    fc.domain(),
    fc.webPath()
  ], ([ruleHost, urlHost, path]) => {
    expect(matchDomainRule(`domain:${ruleHost}`, `https://${urlHost}${path}`)).toBe(
      ruleHost.toLowerCase() === urlHost.toLowerCase()
    )
  })

  it.prop(
    "a wildcard rule matches every proper subdomain",
    [fc.domain(), fc.stringMatching(/^[a-z0-9]{1,10}$/)],
    ([host, label]) => {
      expect(matchDomainRule(`domain:*.${host}`, `https://${label}.${host}/`)).toBe(true)
      expect(matchDomainRule(`domain:*.${host}`, `https://${host}/`)).toBe(false)
    }
  )

  it.prop("never matches arbitrary non-URL strings", [fc.string().filter((s) => !URL.canParse(s))], ([text]) => {
    expect(matchDomainRule("domain:*", text)).toBe(false)
  })
})
