/**
 * One delivery attempt's failure paths, against a plain TCP server (no TLS certificate is trusted
 * here) that counts connections and never answers: a silent endpoint gives NoAnswer after the
 * timeout; without allowPrivate, a private literal is refused before any connection and a name
 * that resolves to a private address (localhost) is refused by the socket's DNS lookup, again
 * without connecting; a closed port gives NoAnswer at once.
 */
import * as Net from "node:net"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Answer, type Outgoing, send } from "../../src/webhooks/Sender.js"

interface SilentServer {
  readonly port: number
  /** How many connections it accepted. */
  readonly connections: () => number
  /** The first byte each connection sent (0x16 is a TLS handshake record). */
  readonly firstBytes: ReadonlyArray<number>
  readonly close: () => Promise<void>
}

const listen = (server: Net.Server) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as Net.AddressInfo).port))
  })

const closeServer = (server: Net.Server) =>
  new Promise<void>((resolve) => server.close(() => resolve()))

/** Accepts connections, reads what they send, and never writes a byte back. */
const silentServer = async (): Promise<SilentServer> => {
  let count = 0
  const firstBytes: Array<number> = []
  const sockets = new Set<Net.Socket>()
  const server = Net.createServer((socket) => {
    count += 1
    sockets.add(socket)
    socket.once("data", (chunk: Buffer) => firstBytes.push(chunk[0]!))
    socket.on("error", () => undefined)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await listen(server)
  return {
    port,
    connections: () => count,
    firstBytes,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await closeServer(server)
    }
  }
}

/** A port that nothing listens on: listen on a free one, then close it. */
const closedPort = async () => {
  const server = Net.createServer()
  const port = await listen(server)
  await closeServer(server)
  return port
}

const outgoing = (url: string): Outgoing => ({
  url,
  body: "{\"id\":\"evt_1\"}",
  headers: { "x-service-timestamp": "1700000000", "x-service-signature": "v1=00" }
})

const noAnswerReason = (answer: Answer): string => {
  expect(answer._tag).toBe("NoAnswer")
  if (answer._tag !== "NoAnswer") throw new Error(`expected NoAnswer, got status ${answer.status}`)
  return answer.reason
}


let server: SilentServer

beforeEach(async () => {
  server = await silentServer()
})

afterEach(async () => {
  await server.close()
})

const LIMITS = { timeoutMs: 10_000, responseMaxBytes: 64 * 1024 }

describe("send", () => {
  it.effect("a silent endpoint gives NoAnswer after the timeout, having connected once", () =>
    Effect.gen(function*() {
      const answer = yield* send(outgoing(`https://127.0.0.1:${server.port}/hook`), { ...LIMITS, allowPrivate: true, timeoutMs: 200 })
      expect(noAnswerReason(answer)).toContain("no answer within 0.2 s")
      expect(server.connections()).toBe(1)
      expect(server.firstBytes).toEqual([0x16]) // it did start a TLS handshake
    }))

  it.effect("without allowPrivate, a private literal is refused without connecting", () =>
    Effect.gen(function*() {
      const answer = yield* send(outgoing(`https://127.0.0.1:${server.port}/`), { ...LIMITS, allowPrivate: false, timeoutMs: 200 })
      const reason = noAnswerReason(answer)
      expect(reason).toContain("refused")
      expect(reason).toBe("refused: 127.0.0.1 is not a public address")
      expect(server.connections()).toBe(0)
    }))

  it.effect("without allowPrivate, the alternative notations of loopback are refused without connecting", () =>
    Effect.gen(function*() {
      for (const host of ["2130706433", "0x7f000001", "127.1", "[::ffff:127.0.0.1]"]) {
        const answer = yield* send(outgoing(`https://${host}:${server.port}/`), { ...LIMITS, allowPrivate: false, timeoutMs: 200 })
        expect(noAnswerReason(answer), host).toBe("refused: 127.0.0.1 is not a public address")
      }
      expect(server.connections()).toBe(0)
    }))

  it.effect("without allowPrivate, localhost is refused by the DNS lookup check without connecting", () =>
    Effect.gen(function*() {
      const answer = yield* send(outgoing(`https://localhost:${server.port}/`), { ...LIMITS, allowPrivate: false, timeoutMs: 200 })
      const reason = noAnswerReason(answer)
      expect(reason).toContain("refused")
      expect(reason).toMatch(/^refused: (127\.0\.0\.1|::1) is not a public address$/)
      expect(reason).not.toContain("no answer within")
      expect(server.connections()).toBe(0)
    }))

  it.effect("a closed port gives NoAnswer (connection refused), not a timeout", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const answer = yield* send(outgoing(`https://127.0.0.1:${port}/hook`), { ...LIMITS, allowPrivate: true, timeoutMs: 10_000 })
      const reason = noAnswerReason(answer)
      expect(reason).toContain("ECONNREFUSED")
      expect(reason).not.toContain("no answer within")
      expect(server.connections()).toBe(0)
    }))

  it.effect("a stored URL that no longer parses is NoAnswer, not a crash", () =>
    Effect.gen(function*() {
      const answer = yield* send(outgoing("not a url"), { ...LIMITS, allowPrivate: true })
      expect(noAnswerReason(answer)).toBe("the webhook URL is not a valid URL")
    }))
})
