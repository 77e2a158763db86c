/** The client's address and scheme behind N trusted proxies, and nothing believed without them. */
import { describe, expect, it } from "vitest"
import { clientAddressOf, isForwardedHttps } from "../../src/platform/http/ClientAddress.js"

describe("client address", () => {
  const request = { peer: "10.0.0.2", forwardedFor: "198.51.100.1, 203.0.113.7", forwardedProto: "http, https" }

  it("without trusted proxies: the socket's peer, whatever the headers claim", () => {
    expect(clientAddressOf(request, 0)).toBe("10.0.0.2")
    expect(isForwardedHttps(request, 0)).toBe(false)
  })

  it("behind N proxies: the entry N from the right of the chain, never one the client wrote", () => {
    expect(clientAddressOf(request, 1)).toBe("203.0.113.7")
    expect(clientAddressOf(request, 2)).toBe("198.51.100.1")
    // fewer entries than proxies (a misconfigured chain): the leftmost there is
    expect(clientAddressOf(request, 5)).toBe("198.51.100.1")
    expect(clientAddressOf({ peer: "10.0.0.2", forwardedFor: undefined, forwardedProto: undefined }, 1)).toBe("10.0.0.2")
  })

  it("the scheme is the nearest proxy's word", () => {
    expect(isForwardedHttps(request, 1)).toBe(true)
    expect(isForwardedHttps({ ...request, forwardedProto: "https, http" }, 1)).toBe(false)
    expect(isForwardedHttps({ ...request, forwardedProto: undefined }, 1)).toBe(false)
  })
})
