/**
 * Which webhook URLs are acceptable: HTTPS, at most 2048 characters, no credentials, and a host
 * that is publicly reachable. Loopback, private, link-local, CGNAT, multicast, reserved and
 * documentation ranges are refused, in every notation (IPv4, IPv6, IPv4-mapped IPv6, and the
 * decimal/octal/hex IPv4 forms, which the WHATWG URL parser turns into dotted quads), and so are
 * names that resolve to them. The same check runs again at delivery, on the address actually
 * connected to (see Sender.ts), so a name that changes its answer cannot slip through.
 */
import * as Dns from "node:dns"
import * as Net from "node:net"
import { Context, Data, Effect, Layer } from "effect"

export class UrlRejected extends Data.TaggedError("UrlRejected")<{ readonly reason: string }> {}

export const MAX_URL_LENGTH = 2048

const blocked = new Net.BlockList()
for (
  const [network, prefix] of [
    ["0.0.0.0", 8], // "this" network
    ["10.0.0.0", 8], // private
    ["100.64.0.0", 10], // carrier-grade NAT
    ["127.0.0.0", 8], // loopback
    ["169.254.0.0", 16], // link-local
    ["172.16.0.0", 12], // private
    ["192.0.0.0", 24], // IETF protocol assignments
    ["192.0.2.0", 24], // documentation (TEST-NET-1)
    ["192.88.99.0", 24], // 6to4 relay anycast
    ["192.168.0.0", 16], // private
    ["198.18.0.0", 15], // benchmarking
    ["198.51.100.0", 24], // documentation (TEST-NET-2)
    ["203.0.113.0", 24], // documentation (TEST-NET-3)
    ["224.0.0.0", 4], // multicast
    ["240.0.0.0", 4] // reserved, and broadcast
  ] as const
) blocked.addSubnet(network, prefix, "ipv4")
for (
  const [network, prefix] of [
    ["::", 96], // unspecified, loopback, and the deprecated IPv4-compatible addresses (::a.b.c.d)
    ["::ffff:0:0:0", 96], // IPv4-translated (SIIT)
    ["64:ff9b:1::", 48], // local-use NAT64
    ["100::", 64], // discard-only
    ["2001::", 23], // IETF protocol assignments (Teredo, ORCHID, benchmarking…)
    ["2001:db8::", 32], // documentation
    ["2002::", 16], // 6to4
    ["3fff::", 20], // documentation
    ["fc00::", 7], // unique local
    ["fe80::", 10], // link-local
    ["fec0::", 10], // site-local (deprecated)
    ["ff00::", 8] // multicast
  ] as const
) blocked.addSubnet(network, prefix, "ipv6")

/** The IPv4 address an IPv4-mapped or NAT64 IPv6 address stands for, if any. */
const embeddedIpv4 = (address: string): string | undefined => {
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted) return dotted[1]
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (hex) {
    const high = parseInt(hex[1]!, 16)
    const low = parseInt(hex[2]!, 16)
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  }
  return undefined
}

/** Why an IP address is not publicly reachable, or undefined when it is. */
export const nonPublicReason = (address: string): string | undefined => {
  const family = Net.isIP(address)
  if (family === 4) return blocked.check(address, "ipv4") ? `${address} is not a public address` : undefined
  if (family === 6) {
    const v4 = embeddedIpv4(address)
    if (v4 !== undefined) return nonPublicReason(v4) ?? undefined
    return blocked.check(address, "ipv6") ? `${address} is not a public address` : undefined
  }
  return `${address} is not an IP address`
}

/** Resolves a host name to all its addresses (a fake in tests). */
export class HostResolver extends Context.Service<HostResolver, {
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, UrlRejected>
}>()("vda/HostResolver") {}

export const SystemResolverLive = Layer.succeed(HostResolver, {
  resolve: (host) =>
    Effect.callback<ReadonlyArray<string>, UrlRejected>((resume) => {
      Dns.lookup(host, { all: true, verbatim: true }, (error, addresses) =>
        resume(
          error
            ? Effect.fail(new UrlRejected({ reason: `the host ${host} could not be resolved` }))
            : Effect.succeed(addresses.map((a) => a.address))
        ))
    })
})

/** The URL's syntax: HTTPS, length, no credentials. Returns the parsed URL. */
export const checkUrlSyntax = Effect.fnUntraced(function*(raw: string) {
  if (raw.length > MAX_URL_LENGTH) {
    return yield* new UrlRejected({ reason: `url must be at most ${MAX_URL_LENGTH} characters` })
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return yield* new UrlRejected({ reason: "url is not a valid absolute URL" })
  }
  if (url.protocol !== "https:") return yield* new UrlRejected({ reason: "url must use https" })
  if (url.username !== "" || url.password !== "") {
    return yield* new UrlRejected({ reason: "url must not contain credentials" })
  }
  return url
})

/** The host with IPv6 brackets removed. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** Every address the URL's host stands for must be public. */
export const checkPublicHost = Effect.fnUntraced(function*(url: URL) {
  const host = hostOf(url)
  if (host === "localhost" || host.endsWith(".localhost")) {
    return yield* new UrlRejected({ reason: "url must be publicly reachable: localhost is not" })
  }
  const addresses = Net.isIP(host) ? [host] : yield* HostResolver.use((r) => r.resolve(host))
  for (const address of addresses) {
    const reason = nonPublicReason(address)
    if (reason !== undefined) {
      return yield* new UrlRejected({
        reason: Net.isIP(host)
          ? `url must be publicly reachable: ${reason}`
          : `url must be publicly reachable: ${host} resolves to ${address}, which is not a public address`
      })
    }
  }
})

/** The whole policy; `allowPrivate` (development, tests) lifts the address check, not HTTPS. */
export const checkWebhookUrl = (raw: string, allowPrivate: boolean) =>
  Effect.flatMap(checkUrlSyntax(raw), (url) => (allowPrivate ? Effect.succeed(url) : Effect.as(checkPublicHost(url), url)))
