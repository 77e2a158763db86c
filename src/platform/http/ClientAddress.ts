/**
 * Who is on the other end of a request when `hops` trusted proxies stand in front of the service:
 * each appends the address it got the request from to `X-Forwarded-For`, so the client is the
 * entry `hops` from the right (anything further left was written by the client and proves
 * nothing). With no trusted proxy, the socket's peer is the client and forwarded headers are
 * ignored.
 */
export interface Forwarded {
  readonly peer: string | undefined
  readonly forwardedFor: string | undefined
  readonly forwardedProto: string | undefined
}

const entries = (header: string | undefined) =>
  (header ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)

export const clientAddressOf = (request: Forwarded, hops: number): string | undefined => {
  if (hops === 0) return request.peer
  const chain = [...entries(request.forwardedFor), ...(request.peer === undefined ? [] : [request.peer])]
  return chain[Math.max(0, chain.length - 1 - hops)]
}

/** Whether the client's own connection was TLS, as the nearest trusted proxy says. */
export const isForwardedHttps = (request: Forwarded, hops: number) =>
  hops > 0 && entries(request.forwardedProto).at(-1)?.toLowerCase() === "https"
