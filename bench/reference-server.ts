/**
 * The design the hot rows' goals were set against, run by the bench side by side with the server:
 * plain Node `http` and `pg`, no Effect, and group commit per key. The waiting requests of a key
 * go as one batch, in one statement of the same admission function the server uses
 * (`vda_admit_charge`, prepared), so metering is exact here too.
 *
 * Two routes, each doing nothing else: no catalog, no request ids, no access log, metrics or error
 * contract. What they spend per request is about the least any Node server on this database
 * design can spend on this machine. Not part of the product.
 *   - `GET /v2/vehicles/{plate}` (production keys): charged with its admission, answered with the
 *     vehicle's body as given at start (VEHICLE_BODY). A request that arrives before the key's
 *     account is known is admitted uncharged and answered 503, as the lane passes its first
 *     request on.
 *   - `GET /v2/operations/{id}` (sandbox keys): admitted and read in one statement, as the lane
 *     does (`admitChargeAlong` with the operations' read), and answered with the row as JSON,
 *     unshaped.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Either } from "effect"
import pg from "pg"
import { keyHashOf, principalOf } from "../src/accounts/Authentication.js"
import * as Charges from "../src/metering/Charges.js"
import {
  ADMIT_CHARGE,
  admitChargeAlong,
  admitChargeParameters,
  type AdmissionRequest,
  type BatchAnswer,
  batchOf,
  type KnownAccount,
  outcomeOf
} from "../src/metering/Admission.js"
import { operationsReadAlong } from "../src/operations/Repo.js"

const vehicleBody = Buffer.from(process.env.VEHICLE_BODY ?? "{}")
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 })
const VEHICLES = "/v2/vehicles/"
const OPERATIONS = "/v2/operations/"
const POLL_STATEMENT = admitChargeAlong(operationsReadAlong)

interface Waiting {
  readonly request: AdmissionRequest
  readonly response: ServerResponse
  /** The operation a poll reads. */
  readonly id?: string
}

interface Lane {
  readonly poll: boolean
  known: KnownAccount | undefined
  queue: Array<Waiting>
  busy: boolean
}

type Row = { readonly answer: BatchAnswer | null; readonly id?: string | null }

const lanes = new Map<string, Lane>()

const answer = (response: ServerResponse, status: number, body?: Buffer) => {
  if (body === undefined) return void response.writeHead(status, { "content-length": "0" }).end()
  response.writeHead(status, { "content-type": "application/json", "content-length": String(body.length) }).end(body)
}

const run = (keyHash: string, lane: Lane) => {
  const waiting = lane.queue.splice(0, 500)
  if (waiting.length === 0) return void (lane.busy = false)
  lane.busy = true
  const requests = waiting.map((w) => w.request)
  const expected = lane.known
  const batch = batchOf(requests, expected)
  const parameters = admitChargeParameters(keyHash, requests[0]!.environment, expected, batch)
  const statement = lane.poll
    ? pool.query<Row>({ name: "poll", text: POLL_STATEMENT, values: [...parameters, ...operationsReadAlong.parameters([...new Set(waiting.map((w) => w.id!))])] })
    : pool.query<Row>({ name: "admit", text: ADMIT_CHARGE, values: parameters })
  statement.then(({ rows }) => {
    const result = rows[0]?.answer ?? null
    if (result?.account) lane.known = { principal: principalOf(result.account), fingerprint: result.fingerprint }
    const bodies = new Map<string, Buffer>()
    if (lane.poll) {
      for (const { answer: _answer, ...row } of rows) if (row.id) bodies.set(row.id, Buffer.from(JSON.stringify(row)))
    }
    waiting.forEach(({ id, request, response }, i) => {
      if (result === null || result.key_environment !== request.environment) return answer(response, 401)
      const outcome = outcomeOf(result, batch, i)
      if (!outcome.admitted) return answer(response, 429)
      if (id !== undefined) {
        const body = bodies.get(id)
        return body === undefined ? answer(response, 404) : answer(response, 200, body)
      }
      // charged only if prepared for the account as the batch expected it
      if (!result.charged || request.prepared?.expected !== expected) return answer(response, 503)
      if (outcome.refused !== 0) return answer(response, 429)
      answer(response, 200, vehicleBody)
    })
  }, () => waiting.forEach(({ response }) => answer(response, 500)))
    .finally(() => run(keyHash, lane))
}

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const url = request.url ?? ""
  const key = keyHashOf(typeof request.headers["x-api-key"] === "string" ? request.headers["x-api-key"] : undefined)
  const poll = url.startsWith(OPERATIONS)
  if (!(poll || url.startsWith(VEHICLES)) || Either.isLeft(key)) return answer(response, 404)
  const keyHash = key.right
  let lane = lanes.get(`${keyHash}/${poll}`)
  if (lane === undefined) lanes.set(`${keyHash}/${poll}`, lane = { poll, known: undefined, queue: [], busy: false })
  const at = Date.now()
  if (poll) {
    lane.queue.push({ request: { keyHash, environment: "sandbox", at }, response, id: url.slice(OPERATIONS.length) })
  } else {
    const plate = url.slice(VEHICLES.length).toUpperCase()
    const prepared = lane.known && { expected: lane.known, consumption: Charges.plateQuery(lane.known.principal, plate, at) }
    lane.queue.push({ request: { keyHash, environment: "production", at, ...(prepared ? { prepared } : {}) }, response })
  }
  if (!lane.busy) run(keyHash, lane)
})

server.listen(0, "127.0.0.1", () => console.log(`reference listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`))
process.on("SIGTERM", () => {
  server.close()
  server.closeAllConnections()
  void pool.end()
})
