/**
 * PostgreSQL stopped and restarted under load, on the server process: while it is down every
 * request gets 503 `temporarily_unavailable` with Retry-After (never a 500, never a hang), the
 * process stays up, it recovers by itself, and billing is exact: every plate query answered 200 is
 * charged once, every module request answered 202 charges its modules once, nothing else is
 * charged, and the operations accepted before the outage finish after it.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Cluster, startCluster, stopCluster } from "../../src/platform/db/EmbeddedPostgres.js"
import { adminQuery, migrate } from "../support/Admin.js"
import { apiOf } from "../support/ApiClient.js"
import { expectErrorBody } from "../support/ErrorShape.js"
import { cliAccount, type ServerProcess, startServer, waitFor } from "../support/Processes.js"

let dataDir: string
let cluster: Cluster
let server: ServerProcess
let key: string

beforeAll(async () => {
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-faults-db-"))
  await Fs.chmod(dataDir, 0o755)
  cluster = await startCluster({ dataDir, ephemeral: true })
  await adminQuery(cluster.url("postgres"), "create database vda")
  await migrate(cluster.url("vda"))
  const env = {
    DATABASE_URL: cluster.url("vda"),
    SANDBOX_MODULE_LATENCY_MS: "300",
    SOURCE_RETRY_INITIAL_MS: "50",
    DB_ACQUIRE_TIMEOUT_MS: "1000"
  }
  key = (await cliAccount(env, { owner: "Faults", plan: "custom", custom: ["--rpm", "unlimited"], environments: ["sandbox"] })).keys.sandbox
  server = await startServer(env)
}, 90_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  if (cluster) await stopCluster(cluster)
  await Fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const api = () => apiOf(server.sandboxUrl, key, { timeout: "15 seconds" })

interface Tally {
  plateQueries: number
  moduleQueries: number
  unavailable: number
  operations: Array<string>
  unexpected: Array<string>
}

/** One client's loop: a vehicle query, then a module request, until told to stop. */
const client = async (index: number, tally: Tally, running: () => boolean) => {
  for (let n = 0; running(); n++) {
    const plate = `AB${500 + ((index * 37 + n) % 100)}CD`
    const modules = n % 2 === 0 ? ["fines"] : ["vtv", "gnc"]
    const answers = [
      { kind: "plate" as const, res: await api().answer((c) => c.vehicles.getVehicle({ params: { plate }, query: {} })) },
      { kind: "modules" as const, res: await api().answer((c) => c.operations.createModulesOperation({ params: { plate }, payload: { modules } })) }
    ]
    for (const { kind, res } of answers) {
      if (res.status === 503) {
        tally.unavailable++
        expect(res.headers["retry-after"]).toMatch(/^\d+$/)
        const error = expectErrorBody(res.text, res.headers["x-request-id"], `${kind} during the outage`)
        expect(error).toMatchObject({ code: "temporarily_unavailable", retryable: true })
        expect(res.error).toMatchObject({ code: "temporarily_unavailable", retryAfter: Number(res.headers["retry-after"]) })
      } else if (kind === "plate" && res.status === 200) {
        tally.plateQueries++
      } else if (kind === "modules" && (res.status === 202 || res.status === 200)) {
        if (res.status === 202) {
          tally.moduleQueries += modules.length
          tally.operations.push(res.body.id)
        }
      } else {
        tally.unexpected.push(`${kind} ${res.status} ${res.text.slice(0, 200)}`)
      }
    }
  }
}

describe("the database stopped and restarted under load", () => {
  it("503 with Retry-After while it is down, recovery after, and billing exact", async () => {
    const tally: Tally = { plateQueries: 0, moduleQueries: 0, unavailable: 0, operations: [], unexpected: [] }
    let running = true
    const clients = Promise.all([0, 1, 2, 3].map((i) => client(i, tally, () => running)))

    await waitFor(() => (tally.plateQueries >= 10 && tally.operations.length >= 4 ? true : undefined), "load before the outage")
    const beforeOutage = tally.operations.length
    await stopCluster(cluster)
    await waitFor(() => (tally.unavailable >= 8 ? true : undefined), "503s during the outage")
    expect(server.child.exitCode).toBeNull()
    cluster = await startCluster({ dataDir, port: cluster.port, ephemeral: true })
    const servedBefore = tally.plateQueries
    await waitFor(() => (tally.plateQueries >= servedBefore + 10 ? true : undefined), "recovery after the outage")
    running = false
    await clients

    expect(tally.unexpected).toEqual([])
    expect(tally.operations.length).toBeGreaterThan(beforeOutage)
    // every accepted operation finishes, the ones caught by the outage too
    const patient = apiOf(server.sandboxUrl, key, { retry: { maxRetries: 10 } }).client
    for (const id of tally.operations) await patient.waitForOperation(id, { deadline: "60 seconds" })
    const usage = (await patient.metering.getUsage()).data
    expect({ plate: usage.plateQueries.used, modules: usage.moduleQueries.used })
      .toEqual({ plate: tally.plateQueries, modules: tally.moduleQueries })
  }, 120_000)
})
