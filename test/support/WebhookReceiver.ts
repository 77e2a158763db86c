/**
 * A real HTTPS webhook endpoint on localhost for end-to-end tests: a throwaway certificate
 * authority (its PEM file is what the server under test trusts through NODE_EXTRA_CA_CERTS), a
 * server certificate for localhost/127.0.0.1, and a receiver that records every request with its
 * raw body and answers as the test scripts it. Signatures are checked here with node:crypto
 * alone, independently of the service's signing code; deliveries are also taken in as an
 * integrator's receiver takes them, with the package's parseWebhookEvent.
 */
import "reflect-metadata" // @peculiar/x509's dependency injection needs it loaded first
import { createHmac, timingSafeEqual, webcrypto } from "node:crypto"
import * as Fs from "node:fs/promises"
import type * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as x509 from "@peculiar/x509"
import { Schema } from "effect"
import { expect } from "vitest"
import { parseWebhookEvent, type ReceivedWebhookEvent, WebhookEventError, type WebhookEventErrorReason } from "../../src/receiver/index.js"
import { V1Event } from "../../src/v1/Api.js"
import { WebhookEvent } from "../../src/webhooks/Api.js"

x509.cryptoProvider.set(webcrypto as unknown as Crypto)

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" }

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der).toString("base64").replace(/.{64}/g, "$&\n").trim()}\n-----END ${label}-----\n`

export interface TlsFixture {
  /** A file with the CA certificate, for NODE_EXTRA_CA_CERTS. */
  readonly caFile: string
  readonly key: string
  readonly cert: string
  /** Removes the temporary directory. */
  readonly dispose: () => Promise<void>
}

/** Webhook retries for tests: 400 ms, then doubling up to 1 s. */
export const FAST_RETRY = { WEBHOOK_RETRY_INITIAL_MS: "400", WEBHOOK_RETRY_COEFFICIENT: "2", WEBHOOK_RETRY_MAX_MS: "1000" }

/**
 * A server's settings to deliver to this fixture's receiver on localhost: its authority trusted
 * through NODE_EXTRA_CA_CERTS (as an operator trusts a private CA), private addresses allowed.
 */
export const trustingReceiver = (tls: TlsFixture) => ({
  NODE_EXTRA_CA_CERTS: tls.caFile,
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true"
})

export const makeTlsFixture = async (): Promise<TlsFixture> => {
  const notBefore = new Date(Date.now() - 60_000)
  const notAfter = new Date(Date.now() + 24 * 3600_000)
  const caKeys = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]) as webcrypto.CryptoKeyPair
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: "CN=Webhook Test CA",
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    notBefore,
    notAfter,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey)
    ]
  })
  const serverKeys = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]) as webcrypto.CryptoKeyPair
  const server = await x509.X509CertificateGenerator.create({
    subject: "CN=localhost",
    issuer: ca.subject,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    notBefore,
    notAfter,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "localhost" }, { type: "ip", value: "127.0.0.1" }]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey)
    ]
  })
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-webhook-ca-"))
  const caFile = Path.join(dir, "ca.pem")
  await Fs.writeFile(caFile, ca.toString("pem"))
  return {
    caFile,
    key: pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", serverKeys.privateKey)),
    cert: server.toString("pem"),
    dispose: () => Fs.rm(dir, { recursive: true, force: true })
  }
}

export interface Received {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  /** The body exactly as it arrived. */
  readonly rawBody: Buffer
  readonly receivedAt: number
}

/**
 * How the receiver answers a request: a status, a redirect, never (a hanging endpoint), a status
 * line followed by a header line every 300 ms for ever (an endpoint that trickles bytes, so the
 * connection is never idle), or a status decided by running something first.
 */
export type Reply = number | { readonly redirect: string } | "hang" | "trickle" | (() => Promise<number>)

export interface Receiver {
  /** `https://127.0.0.1:PORT` */
  readonly url: string
  readonly received: Array<Received>
  /** Requests to `path` (a webhook URL's path), in arrival order. */
  readonly at: (path: string) => Array<Received>
  /** Scripts the answers for `path`: one per request, the last one repeated. */
  readonly script: (path: string, replies: ReadonlyArray<Reply>) => void
  readonly close: () => Promise<void>
}

export const startReceiver = async (tls: TlsFixture): Promise<Receiver> => {
  const received: Array<Received> = []
  const scripts = new Map<string, Array<Reply>>()
  const hanging = new Set<Http.ServerResponse>()
  const server = Https.createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", async () => {
      const path = request.url ?? "/"
      received.push({ path, headers: request.headers, rawBody: Buffer.concat(chunks), receivedAt: Date.now() })
      const replies = scripts.get(path) ?? [200]
      const reply = replies.length > 1 ? replies.shift()! : replies[0]!
      if (reply === "hang") return void hanging.add(response)
      if (reply === "trickle") {
        hanging.add(response)
        const socket = response.socket!
        socket.write("HTTP/1.1 200 OK\r\n")
        const timer = setInterval(() => socket.write("X-Trickle: 1\r\n"), 300)
        socket.on("close", () => clearInterval(timer))
        return
      }
      if (typeof reply === "object") {
        response.writeHead(302, { location: reply.redirect }).end()
        return
      }
      const status = typeof reply === "function" ? await reply() : reply
      response.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "no")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `https://127.0.0.1:${port}`,
    received,
    at: (path) => received.filter((r) => r.path === path),
    script: (path, replies) => void scripts.set(path, [...replies]),
    close: async () => {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** The spec's signature rule, computed here from scratch: v1= + hex HMAC-SHA256(timestamp.rawBody). */
export const signatureIsValid = (secret: string, request: Received): boolean => {
  const timestamp = request.headers["x-service-timestamp"]
  const signature = request.headers["x-service-signature"]
  if (typeof timestamp !== "string" || typeof signature !== "string") return false
  const expected = "v1=" + createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(Buffer.concat([Buffer.from(`${timestamp}.`, "utf8"), request.rawBody]))
    .digest("hex")
  return expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature))
}

const encodeV2 = Schema.encodeSync(WebhookEvent)
const encodeV1 = Schema.encodeSync(V1Event)

/**
 * The delivery as an integrator's receiver takes it in on arrival: `parseWebhookEvent`. Its
 * payload, encoded again, is the body as sent: decoding lost nothing.
 */
export const receivedEvent = (secret: string | ReadonlyArray<string>, request: Received): ReceivedWebhookEvent => {
  const received = parseWebhookEvent(request.rawBody, request.headers, secret, { now: request.receivedAt })
  const encoded = received.apiVersion === "v2" ? encodeV2(received.payload) : encodeV1(received.payload)
  expect(encoded).toEqual(JSON.parse(request.rawBody.toString("utf8")))
  return received
}

/** Why `parseWebhookEvent` refuses the delivery with `secret` on arrival; undefined when it takes it. */
export const refusalOf = (secret: string, request: Received): WebhookEventErrorReason | undefined => {
  try {
    parseWebhookEvent(request.rawBody, request.headers, secret, { now: request.receivedAt })
    return undefined
  } catch (error) {
    if (error instanceof WebhookEventError) return error.reason
    throw error
  }
}
