/**
 * Receive a webhook delivery and verify it: a receiver that points the environment's webhook at
 * itself, asks the API for a test delivery, and takes it in with `parseWebhookEvent` (signature,
 * time and body checked). A real receiver reads its secret from its configuration instead.
 *
 *   VDA_BASE_URL            the API's address (the sandbox's, http://localhost:8081, with a vda_test_ key)
 *   VDA_API_KEY             an API key of that environment
 *   VDA_WEBHOOK_URL         where the API reaches this receiver (an HTTPS URL; https://127.0.0.1:PORT unless given)
 *   PORT                    the port to listen on (any free one unless given)
 *   TLS_KEY_FILE, TLS_CERT_FILE  the receiver's key and certificate (PEM): the API delivers over HTTPS only.
 *                           Without them it listens over plain HTTP, behind a proxy that terminates TLS.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import { makePromiseClient } from "vehicle-data-api/client"
import { parseWebhookEvent, WebhookEventError } from "vehicle-data-api/webhooks"

const api = makePromiseClient({ baseUrl: process.env.VDA_BASE_URL!, apiKey: process.env.VDA_API_KEY! })
let secret = ""

const receive = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    try {
      // the body exactly as it arrived: the signature is over these bytes
      const received = parseWebhookEvent(Buffer.concat(chunks), request.headers, secret)
      console.log(`received ${received.event} ${received.eventId}`)
      if (received.event === "v2.webhook.test") console.log(`  message: ${received.payload.data.message}`)
      response.writeHead(200).end()
      server.close()
    } catch (error) {
      if (!(error instanceof WebhookEventError)) throw error
      // signature or timestamp: not from the service (or a replay); unknown_event: acknowledge, and upgrade
      console.error(`refused a delivery: ${error.reason}`)
      response.writeHead(error.reason === "unknown_event" ? 200 : 400).end()
    }
  })
}

const tls = process.env.TLS_KEY_FILE && process.env.TLS_CERT_FILE
  ? { key: Fs.readFileSync(process.env.TLS_KEY_FILE), cert: Fs.readFileSync(process.env.TLS_CERT_FILE) }
  : undefined
const server = tls === undefined ? Http.createServer(receive) : Https.createServer(tls, receive)
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), resolve))
const { port } = server.address() as AddressInfo

const config = await api.webhooks.updateWebhookConfig({
  payload: { url: process.env.VDA_WEBHOOK_URL ?? `https://127.0.0.1:${port}/vehicle-data`, enabled: true }
})
secret = config.secret
const test = await api.webhooks.sendWebhookTest()
console.log(`asked for test delivery ${test.id}`)
