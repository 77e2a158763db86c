/**
 * The webhook URL policy, rule by rule: HTTPS only, at most 2048 characters, no credentials, and
 * a publicly reachable host. Every private, loopback, link-local, CGNAT, multicast, reserved,
 * documentation and benchmarking range is refused as an IPv4 literal, in the alternative IPv4
 * notations the WHATWG URL parser normalises, as an IPv6 (and IPv4-mapped IPv6) literal, and
 * behind a host name. Names go through a fake resolver, so nothing here touches real DNS; each
 * refusal is checked for its exact reason, and each acceptance for the URL it returns.
 */
import { beforeEach, describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  checkUrlSyntax,
  checkWebhookUrl,
  HostResolver,
  MAX_URL_LENGTH,
  nonPublicReason,
  UrlRejected
} from "../../src/webhooks/UrlPolicy.js"

/** Made-up names and what the fake resolver says they stand for. */
const ZONE: Record<string, ReadonlyArray<string>> = {
  "hooks.example.com": ["93.184.216.34"],
  "dual.example.com": ["93.184.216.34", "2606:4700:4700::1111"],
  "internal.example.com": ["10.1.2.3"],
  "mixed.example.com": ["93.184.216.34", "127.0.0.1"],
  "v6.example.com": ["fd00::1"]
}

/** Every host name the fake resolver was asked about, in order. */
let lookups: Array<string> = []

const FakeResolver = Layer.succeed(HostResolver, {
  resolve: (host) =>
    Effect.suspend(() => {
      lookups.push(host)
      const addresses = ZONE[host]
      return addresses === undefined
        ? Effect.fail(new UrlRejected({ reason: `the host ${host} could not be resolved` }))
        : Effect.succeed(addresses)
    })
})

const check = (raw: string, allowPrivate = false) => checkWebhookUrl(raw, allowPrivate).pipe(Effect.provide(FakeResolver))

/** The reason the policy gives for refusing `raw` (fails the test if it is accepted). */
const refusal = (raw: string, allowPrivate = false) =>
  check(raw, allowPrivate).pipe(
    Effect.flip,
    Effect.map((error) => {
      expect(error).toBeInstanceOf(UrlRejected)
      expect(error._tag).toBe("UrlRejected")
      return error.reason
    })
  )

const notPublic = (address: string) => `url must be publicly reachable: ${address} is not a public address`

beforeEach(() => {
  lookups = []
})

describe("types and constants", () => {
  it("checkWebhookUrl needs a HostResolver and fails only with UrlRejected; the limit is 2048", () => {
    expectTypeOf(checkWebhookUrl("https://hooks.example.com/", false)).toEqualTypeOf<
      Effect.Effect<URL, UrlRejected, HostResolver>
    >()
    expectTypeOf(checkUrlSyntax("https://hooks.example.com/")).toEqualTypeOf<Effect.Effect<URL, UrlRejected>>()
    expect(MAX_URL_LENGTH).toBe(2048)
  })
})

describe("syntax", () => {
  it.effect("http:// is refused: webhooks must use https", () =>
    Effect.gen(function*() {
      const reason = yield* refusal("http://hooks.example.com/hook")
      expect(reason).toBe("url must use https")
      expect(reason).toContain("https")
      expect(lookups).toEqual([])
    }))

  it.effect("other schemes are refused too", () =>
    Effect.gen(function*() {
      expect(yield* refusal("ftp://hooks.example.com/hook")).toBe("url must use https")
      expect(yield* refusal("wss://hooks.example.com/hook")).toBe("url must use https")
    }))

  it.effect("something that is not an absolute URL is refused", () =>
    Effect.gen(function*() {
      expect(yield* refusal("not a url")).toBe("url is not a valid absolute URL")
      expect(yield* refusal("/relative/path")).toBe("url is not a valid absolute URL")
      expect(yield* refusal("")).toBe("url is not a valid absolute URL")
      expect(yield* refusal("https://")).toBe("url is not a valid absolute URL")
      expect(lookups).toEqual([])
    }))

  it.effect("a URL of exactly 2048 characters is accepted, one of 2049 is refused", () =>
    Effect.gen(function*() {
      const prefix = "https://hooks.example.com/"
      const longest = prefix + "a".repeat(MAX_URL_LENGTH - prefix.length)
      expect(longest).toHaveLength(2048)
      const url = yield* check(longest)
      expect(url.href).toBe(longest)
      expect(lookups).toEqual(["hooks.example.com"])

      const tooLong = longest + "a"
      expect(tooLong).toHaveLength(2049)
      const reason = yield* refusal(tooLong)
      expect(reason).toBe("url must be at most 2048 characters")
      expect(reason).toContain("2048")
      expect(lookups).toEqual(["hooks.example.com"]) // the long one never got as far as the resolver
    }))

  it.effect("credentials in the URL are refused (user and password, or user alone)", () =>
    Effect.gen(function*() {
      expect(yield* refusal("https://user:secret@hooks.example.com/hook")).toBe("url must not contain credentials")
      expect(yield* refusal("https://user@hooks.example.com/hook")).toBe("url must not contain credentials")
      expect(yield* refusal("https://:secret@hooks.example.com/hook")).toBe("url must not contain credentials")
      expect(lookups).toEqual([])
    }))

  it.effect("checkUrlSyntax alone returns the parsed URL, with alternative IPv4 notations normalised", () =>
    Effect.gen(function*() {
      const url = yield* checkUrlSyntax("https://hooks.example.com:8443/a/b?c=d")
      expect(url.hostname).toBe("hooks.example.com")
      expect(url.port).toBe("8443")
      expect(url.pathname).toBe("/a/b")
      expect((yield* checkUrlSyntax("https://0x7f000001/")).hostname).toBe("127.0.0.1")
      // syntax only: a private address passes this part
      expect((yield* checkUrlSyntax("https://10.0.0.1/")).hostname).toBe("10.0.0.1")
      expect((yield* Effect.flip(checkUrlSyntax("http://10.0.0.1/"))).reason).toBe("url must use https")
    }))
})

describe("localhost", () => {
  const localhosts = ["https://localhost/hook", "https://localhost:8443/hook", "https://foo.localhost/hook", "https://a.b.localhost/"]
  for (const raw of localhosts) {
    it.effect(`${raw} is refused without asking the resolver`, () =>
      Effect.gen(function*() {
        expect(yield* refusal(raw)).toBe("url must be publicly reachable: localhost is not")
        expect(lookups).toEqual([])
      }))
  }
})

describe("IPv4 literals", () => {
  const refused: ReadonlyArray<readonly [string, string]> = [
    ["loopback", "127.0.0.1"],
    ["loopback, anywhere in 127/8", "127.255.255.254"],
    ["private 10/8", "10.0.0.1"],
    ["private 10/8, last address", "10.255.255.255"],
    ["private 172.16/12, first", "172.16.0.1"],
    ["private 172.16/12, last", "172.31.255.255"],
    ["private 192.168/16", "192.168.1.1"],
    ["link-local: cloud metadata", "169.254.169.254"],
    ["carrier-grade NAT 100.64/10", "100.64.0.1"],
    ["carrier-grade NAT 100.64/10, last", "100.127.255.255"],
    ["this network", "0.0.0.0"],
    ["multicast", "224.0.0.1"],
    ["multicast, last", "239.255.255.255"],
    ["reserved", "240.0.0.1"],
    ["broadcast", "255.255.255.255"],
    ["documentation TEST-NET-1", "192.0.2.1"],
    ["documentation TEST-NET-2", "198.51.100.1"],
    ["documentation TEST-NET-3", "203.0.113.1"],
    ["benchmarking 198.18/15", "198.18.0.1"],
    ["benchmarking 198.18/15, upper half", "198.19.255.255"]
  ]
  for (const [what, address] of refused) {
    it.effect(`refuses ${address} (${what})`, () =>
      Effect.gen(function*() {
        expect(yield* refusal(`https://${address}/hook`)).toBe(notPublic(address))
        expect(yield* refusal(`https://${address}:8443/hook`)).toBe(notPublic(address))
        expect(lookups).toEqual([]) // literals are never resolved
      }))
  }

  const accepted: ReadonlyArray<readonly [string, string]> = [
    ["just above 172.16/12", "https://172.32.0.1/hook"],
    ["just below 172.16/12", "https://172.15.255.255/hook"],
    ["just above CGNAT", "https://100.128.0.1/hook"],
    ["just below CGNAT", "https://100.63.255.255/hook"],
    ["just above benchmarking", "https://198.20.0.1/hook"],
    ["a public address", "https://93.184.216.34/hook"],
    ["a public address with a port", "https://8.8.8.8:8443/x"]
  ]
  for (const [what, raw] of accepted) {
    it.effect(`accepts ${raw} (${what})`, () =>
      Effect.gen(function*() {
        const url = yield* check(raw)
        expect(url.href).toBe(raw)
        expect(lookups).toEqual([])
      }))
  }
})

describe("alternative IPv4 notations, normalised by the URL parser, are refused too", () => {
  for (
    const [what, raw] of [
      ["decimal", "https://2130706433/"],
      ["hexadecimal", "https://0x7f000001/"],
      ["octal", "https://0177.0.0.1/"],
      ["short form", "https://127.1/"],
      ["dotted hexadecimal", "https://0x7f.0.0.1/"],
      ["trailing dot", "https://127.0.0.1./"]
    ] as const
  ) {
    it.effect(`${raw} (${what}) is 127.0.0.1`, () =>
      Effect.gen(function*() {
        expect(yield* refusal(raw)).toBe(notPublic("127.0.0.1"))
        expect(lookups).toEqual([])
      }))
  }

  it.effect("other private ranges in decimal and hex: 10.0.0.1 and 169.254.169.254", () =>
    Effect.gen(function*() {
      expect(yield* refusal("https://167772161/")).toBe(notPublic("10.0.0.1"))
      expect(yield* refusal("https://0xa9fea9fe/")).toBe(notPublic("169.254.169.254"))
    }))
})

describe("IPv6 literals", () => {
  // [the URL as written, the address the reason names (as the URL parser serialises it)]
  const refused: ReadonlyArray<readonly [string, string, string]> = [
    ["loopback", "https://[::1]/hook", "::1"],
    ["unspecified", "https://[::]/hook", "::"],
    ["link-local", "https://[fe80::1]/hook", "fe80::1"],
    ["unique local fc00::/7", "https://[fc00::1]/hook", "fc00::1"],
    ["unique local fd00::/8", "https://[fd12:3456::1]/hook", "fd12:3456::1"],
    ["multicast", "https://[ff02::1]/hook", "ff02::1"],
    ["documentation", "https://[2001:db8::1]/hook", "2001:db8::1"],
    ["loopback, long form with a port", "https://[0:0:0:0:0:0:0:1]:8443/hook", "::1"],
    ["IPv4-mapped loopback, dotted", "https://[::ffff:127.0.0.1]/hook", "127.0.0.1"],
    ["IPv4-mapped loopback, hex", "https://[::ffff:7f00:1]/hook", "127.0.0.1"],
    ["IPv4-mapped private", "https://[::ffff:10.0.0.1]/hook", "10.0.0.1"],
    ["IPv4-mapped cloud metadata", "https://[::ffff:169.254.169.254]/", "169.254.169.254"],
    ["NAT64 of loopback", "https://[64:ff9b::127.0.0.1]/", "127.0.0.1"],
    // deprecated forms the URL parser rewrites to hex: ::127.0.0.1 is ::7f00:1
    ["IPv4-compatible loopback", "https://[::127.0.0.1]/hook", "::7f00:1"],
    ["IPv4-compatible private", "https://[::10.0.0.1]/hook", "::a00:1"],
    ["IPv4-compatible public (deprecated, never routable)", "https://[::8.8.8.8]/hook", "::808:808"],
    ["IPv4-translated loopback", "https://[::ffff:0:127.0.0.1]/hook", "::ffff:0:7f00:1"]
  ]
  for (const [what, raw, address] of refused) {
    it.effect(`refuses ${raw} (${what})`, () =>
      Effect.gen(function*() {
        expect(yield* refusal(raw)).toBe(notPublic(address))
        expect(lookups).toEqual([])
      }))
  }

  it.effect("accepts a public IPv6 address, and a public IPv4 address mapped into IPv6", () =>
    Effect.gen(function*() {
      expect((yield* check("https://[2606:4700:4700::1111]/hook")).hostname).toBe("[2606:4700:4700::1111]")
      expect((yield* check("https://[2606:4700:4700::1111]:8443/x")).port).toBe("8443")
      expect((yield* check("https://[::ffff:93.184.216.34]/hook")).hostname).toBe("[::ffff:5db8:d822]")
      expect(lookups).toEqual([])
    }))
})

describe("host names, through the resolver", () => {
  it.effect("a name that resolves to a public address is accepted", () =>
    Effect.gen(function*() {
      const url = yield* check("https://hooks.example.com:8443/hook?x=1")
      expect(url.href).toBe("https://hooks.example.com:8443/hook?x=1")
      expect(lookups).toEqual(["hooks.example.com"]) // the host alone, without the port
    }))

  it.effect("a name with several public addresses (IPv4 and IPv6) is accepted", () =>
    Effect.gen(function*() {
      expect((yield* check("https://dual.example.com/hook")).hostname).toBe("dual.example.com")
      expect(lookups).toEqual(["dual.example.com"])
    }))

  it.effect("a name that resolves to a private address is refused, naming the host and the address", () =>
    Effect.gen(function*() {
      const reason = yield* refusal("https://internal.example.com/hook")
      expect(reason).toContain("internal.example.com")
      expect(reason).toContain("10.1.2.3")
      expect(reason).toBe(
        "url must be publicly reachable: internal.example.com resolves to 10.1.2.3, which is not a public address"
      )
    }))

  it.effect("a name with ANY private address among public ones is refused", () =>
    Effect.gen(function*() {
      const reason = yield* refusal("https://mixed.example.com/hook")
      expect(reason).toBe(
        "url must be publicly reachable: mixed.example.com resolves to 127.0.0.1, which is not a public address"
      )
    }))

  it.effect("a name that resolves to a private IPv6 address is refused", () =>
    Effect.gen(function*() {
      const reason = yield* refusal("https://v6.example.com/hook")
      expect(reason).toContain("v6.example.com")
      expect(reason).toContain("fd00::1")
    }))

  it.effect("a name that cannot be resolved is refused", () =>
    Effect.gen(function*() {
      const reason = yield* refusal("https://nowhere.example.com/hook")
      expect(reason).toContain("could not be resolved")
      expect(reason).toContain("nowhere.example.com")
      expect(lookups).toEqual(["nowhere.example.com"])
    }))
})

describe("allowPrivate (development and tests)", () => {
  it.effect("accepts loopback literals and localhost", () =>
    Effect.gen(function*() {
      expect((yield* check("https://127.0.0.1:9443/hook", true)).href).toBe("https://127.0.0.1:9443/hook")
      expect((yield* check("https://localhost/x", true)).href).toBe("https://localhost/x")
      expect((yield* check("https://[::1]:9443/x", true)).hostname).toBe("[::1]")
    }))

  it.effect("skips the resolver altogether", () =>
    Effect.gen(function*() {
      expect((yield* check("https://internal.example.com/hook", true)).hostname).toBe("internal.example.com")
      expect((yield* check("https://nowhere.example.com/hook", true)).hostname).toBe("nowhere.example.com")
      expect(lookups).toEqual([])
    }))

  it.effect("still requires https, no credentials, and the length limit", () =>
    Effect.gen(function*() {
      const reason = yield* refusal("http://127.0.0.1/", true)
      expect(reason).toContain("https")
      expect(reason).toBe("url must use https")
      expect(yield* refusal("https://user:pw@127.0.0.1/", true)).toBe("url must not contain credentials")
      expect(yield* refusal("https://localhost/" + "a".repeat(MAX_URL_LENGTH), true)).toBe(
        "url must be at most 2048 characters"
      )
    }))
})

describe("nonPublicReason", () => {
  it("returns undefined for public addresses", () => {
    expect(nonPublicReason("93.184.216.34")).toBeUndefined()
    expect(nonPublicReason("8.8.8.8")).toBeUndefined()
    expect(nonPublicReason("172.32.0.1")).toBeUndefined()
    expect(nonPublicReason("2606:4700:4700::1111")).toBeUndefined()
    expect(nonPublicReason("::ffff:93.184.216.34")).toBeUndefined()
  })

  it("names the address when it is not public", () => {
    expect(nonPublicReason("127.0.0.1")).toBe("127.0.0.1 is not a public address")
    expect(nonPublicReason("10.1.2.3")).toBe("10.1.2.3 is not a public address")
    expect(nonPublicReason("169.254.169.254")).toBe("169.254.169.254 is not a public address")
    expect(nonPublicReason("::1")).toBe("::1 is not a public address")
    expect(nonPublicReason("fd00::1")).toBe("fd00::1 is not a public address")
    expect(nonPublicReason("2001:db8::1")).toBe("2001:db8::1 is not a public address")
  })

  it("looks inside IPv4-mapped and NAT64 IPv6 addresses, in dotted and hex form, any case", () => {
    expect(nonPublicReason("::ffff:192.168.0.1")).toBe("192.168.0.1 is not a public address")
    expect(nonPublicReason("::ffff:7f00:1")).toBe("127.0.0.1 is not a public address")
    expect(nonPublicReason("::FFFF:7F00:1")).toBe("127.0.0.1 is not a public address")
    expect(nonPublicReason("64:ff9b::a00:1")).toBe("10.0.0.1 is not a public address")
    expect(nonPublicReason("::ffff:5db8:d822")).toBeUndefined() // 93.184.216.34
  })

  it("says when the text is not an IP address at all", () => {
    expect(nonPublicReason("hooks.example.com")).toBe("hooks.example.com is not an IP address")
    expect(nonPublicReason("")).toBe(" is not an IP address")
    expect(nonPublicReason("256.0.0.1")).toBe("256.0.0.1 is not an IP address")
  })
})
