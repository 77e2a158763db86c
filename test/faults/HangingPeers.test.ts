/**
 * Peers that never finish, on the server process: sources that send their headers and then
 * trickle the body for ever, and a webhook endpoint that trickles its answer. Each call ends at
 * its total deadline (shortened here through the settings that change them), the operations end
 * failed with the stable message, and the next webhook attempt goes out and succeeds.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sourceUnavailableMessage } from "../../workflows/shared.js"
import { SOURCE_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { apiOf } from "../support/ApiClient.js"
import { makeTlsFixture, type Receiver, startReceiver, type TlsFixture, trustingReceiver } from "../support/WebhookReceiver.js"

let tls: TlsFixture
let receiver: Receiver
let source: Http.Server
let server: ServerProcess
let key: string
const sourceCalls: Array<{ path: string; at: number }> = []
const DEADLINES = { vehicle: 1_000, module: 2_000, webhook: 3_000 }
/** Arrival times are taken once a request is read, a little after its sender's clock started. */
const EARLY = 150

/** Answers 200 with its headers at once, then one byte of body every 200 ms, for ever. */
const startTricklingSource = () =>
  new Promise<Http.Server>((resolve) => {
    const server = Http.createServer((req, res) => {
      sourceCalls.push({ path: req.url ?? "", at: Date.now() })
      res.writeHead(200, { "content-type": "application/json" })
      res.write("{")
      const timer = setInterval(() => res.write(" "), 200)
      res.on("close", () => clearInterval(timer))
    })
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

beforeAll(async () => {
  tls = await makeTlsFixture()
  receiver = await startReceiver(tls)
  source = await startTricklingSource()
  const base = `http://127.0.0.1:${(source.address() as AddressInfo).port}`
  const env = {
    DATABASE_URL: await freshDatabase(),
    ...trustingReceiver(tls),
    WEBHOOK_RETRY_INITIAL_MS: "200",
    SOURCE_RETRY_INITIAL_MS: "50",
    VEHICLE_UPSTREAM_URL: `${base}/vehicles`,
    FINES_UPSTREAM_URL: `${base}/fines`,
    VEHICLE_UPSTREAM_TIMEOUT_MS: String(DEADLINES.vehicle),
    MODULE_UPSTREAM_TIMEOUT_MS: String(DEADLINES.module),
    WEBHOOK_TIMEOUT_MS: String(DEADLINES.webhook)
  }
  key = (await cliAccount(env, { owner: "Peers", plan: "custom", custom: ["--rpm", "unlimited"], environments: ["production"] })).keys.production
  server = await startServer(env)
}, 60_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  source?.closeAllConnections()
  source?.close()
  await receiver?.close()
  await tls?.dispose()
})

const api = () => apiOf(server.productionUrl, key)

/** The operation once final, polled often (its end is timed), as the API answers it on the wire. */
const finished = (id: string) =>
  waitFor(async () => {
    const { body } = await api().answer((c) => c.operations.getOperation({ params: { id } }))
    return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
  }, `operation ${id} to end`, 60_000)

/** The gaps between successive calls to a source: each one is an attempt cut at its deadline (plus backoff). */
const gaps = (path: string) => {
  const at = sourceCalls.filter((c) => c.path.startsWith(path)).map((c) => c.at)
  return at.slice(1).map((t, i) => t - at[i]!)
}

describe("peers that trickle for ever", () => {
  it("each call ends at its deadline, the operations fail cleanly, and the trickling webhook is retried", async () => {
    const configured = await api().answer((c) => c.webhooks.updateWebhookConfig({ payload: { url: `${receiver.url}/trickle`, enabled: true } }))
    expect(configured.status).toBe(200)
    receiver.script("/trickle", ["trickle", 200])

    const started = Date.now()
    const modules = await api().answer((c) => c.operations.createModulesOperation({ params: { plate: "AE100FG" }, payload: { modules: ["fines"] } }))
    expect(modules.status).toBe(202)
    const search = await api().answer((c) => c.vehicles.getVehicle({ params: { plate: "AE101FG" }, query: { onMiss: "search" } }))
    expect(search.status).toBe(202)

    const [fines, vehicle] = await Promise.all([finished(modules.body.id), finished(search.body.id)])
    const elapsed = Date.now() - started
    expect(fines).toMatchObject({
      status: "failed",
      modules: { fines: { status: "failed", data: null, error: { code: "module_unavailable", message: sourceUnavailableMessage("fines") } } }
    })
    expect(vehicle).toMatchObject({ status: "failed", result: { error: { code: "temporarily_unavailable", message: sourceUnavailableMessage("vehicle") } } })
    // every attempt was cut at its deadline, none kept open by the trickle, and retries never nest
    // (the search's workflow retries; the source call inside it does not retry again)
    expect(gaps("/fines")).toHaveLength(SOURCE_RETRY.maximumAttempts - 1)
    expect(gaps("/vehicles")).toHaveLength(SOURCE_RETRY.maximumAttempts - 1)
    for (const gap of gaps("/fines")) expect(gap).toBeGreaterThanOrEqual(DEADLINES.module - EARLY), expect(gap).toBeLessThan(DEADLINES.module + 1_500)
    for (const gap of gaps("/vehicles")) expect(gap).toBeGreaterThanOrEqual(DEADLINES.vehicle - EARLY), expect(gap).toBeLessThan(DEADLINES.vehicle + 1_500)
    expect(elapsed).toBeLessThan(SOURCE_RETRY.maximumAttempts * DEADLINES.module + 3_000)

    // the operations' events: the first attempt to arrive trickles and is cut at its deadline, its retry is answered
    const deliveries = await waitFor(async () => {
      const list = (await api().answer((c) => c.webhooks.listWebhookDeliveries({ query: { limit: 10 } }))).body.deliveries as Array<any>
      return list.length === 2 && list.every((d) => d.status !== "pending") ? list : undefined
    }, "the deliveries to settle", 60_000)
    for (const d of deliveries) expect(d).toMatchObject({ status: "processed", responseStatus: 200 })
    expect(deliveries.map((d) => d.attempts).sort()).toEqual([1, 2])
    const [cut, ...rest] = receiver.at("/trickle")
    const retry = rest.find((r) => r.headers["x-service-delivery"] === cut!.headers["x-service-delivery"])!
    expect(retry.receivedAt - cut!.receivedAt).toBeGreaterThanOrEqual(DEADLINES.webhook - EARLY)
    expect(retry.receivedAt - cut!.receivedAt).toBeLessThan(DEADLINES.webhook + 2_000)
  }, 120_000)
})
