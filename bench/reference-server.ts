/**
 * The design the vehicle query's goal was set against, run by the bench side by side with the
 * server: plain Node `http` and `pg`, no Effect, and group commit per key. The waiting requests of
 * a key go as one batch, in one call of the same admission function the server uses
 * (`vda_admit_charge`), so metering is exact here too.
 *
 * It answers every charged request with the vehicle's body as given at start (VEHICLE_BODY), and
 * does nothing else: no catalog, no request ids, no access log, metrics or error contract. What
 * it spends per request is about the least any Node server on this database design can spend on
 * this machine. A request that arrives before the key's account is known is admitted uncharged
 * and answered 503, as the lane passes its first request on. Not part of the product.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Either } from "effect"
import pg from "pg"
import { keyHashOf, principalOf } from "../src/accounts/Authentication.js"
import * as Charges from "../src/metering/Charges.js"
import {
  ADMIT_CHARGE,
  admitChargeParameters,
  type AdmissionRequest,
  type BatchAnswer,
  batchOf,
  type KnownAccount
} from "../src/metering/Admission.js"

const body = Buffer.from(process.env.VEHICLE_BODY ?? "{}")
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 })
const PATH = "/v2/vehicles/"

interface Waiting {
  readonly request: AdmissionRequest
  readonly response: ServerResponse
}

interface Lane {
  known: KnownAccount | undefined
  queue: Array<Waiting>
  busy: boolean
}

const lanes = new Map<string, Lane>()

const answer = (response: ServerResponse, status: number) => {
  if (status !== 200) return void response.writeHead(status, { "content-length": "0" }).end()
  response.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) }).end(body)
}

const run = (keyHash: string, lane: Lane) => {
  const batch = lane.queue.splice(0, 500)
  if (batch.length === 0) return void (lane.busy = false)
  lane.busy = true
  const requests = batch.map((waiting) => waiting.request)
  const expected = lane.known
  pool.query<{ answer: BatchAnswer | null }>(ADMIT_CHARGE, admitChargeParameters(keyHash, "production", expected, batchOf(requests, expected)))
    .then(({ rows: [row] }) => {
      const result = row?.answer ?? null
      if (result?.account) lane.known = { principal: principalOf(result.account), fingerprint: result.fingerprint }
      batch.forEach(({ request, response }, i) => {
        if (result === null || result.key_environment !== "production") return answer(response, 401)
        if (!result.admitted![i]) return answer(response, 429)
        // charged only if prepared for the account as the batch expected it
        if (!result.charged || request.prepared?.expected !== expected) return answer(response, 503)
        answer(response, result.refused![i] === 0 ? 200 : 429)
      })
    }, () => batch.forEach(({ response }) => answer(response, 500)))
    .finally(() => run(keyHash, lane))
}

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const url = request.url ?? ""
  const key = keyHashOf(typeof request.headers["x-api-key"] === "string" ? request.headers["x-api-key"] : undefined)
  if (!url.startsWith(PATH) || Either.isLeft(key)) return answer(response, 404)
  const keyHash = key.right
  let lane = lanes.get(keyHash)
  if (lane === undefined) lanes.set(keyHash, lane = { known: undefined, queue: [], busy: false })
  const at = Date.now()
  const plate = url.slice(PATH.length).toUpperCase()
  const prepared = lane.known && { expected: lane.known, consumption: Charges.plateQuery(lane.known.principal, plate, at) }
  lane.queue.push({ request: { keyHash, environment: "production", at, ...(prepared ? { prepared } : {}) }, response })
  if (!lane.busy) run(keyHash, lane)
})

server.listen(0, "127.0.0.1", () => console.log(`reference listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`))
process.on("SIGTERM", () => {
  server.close()
  server.closeAllConnections()
  void pool.end()
})
