/**
 * `kill -9` of the server (inline engine) in the middle of operations: module operations at
 * different stages and a vehicle search. After the restart every one of them finishes, and
 * nothing is charged twice: the usage is exactly what the accepted requests charged. And an
 * operation committed whose client left before it reached the engine is started by the running
 * server's sweep, with no restart.
 */
import type { Duration } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { expectShape, ModulesOperation } from "../support/SpecShapes.js"
import { apiOf } from "../support/ApiClient.js"

let env: Record<string, string>
let key: string
let accountId: string
const servers: Array<ServerProcess> = []

const start = async () => {
  const server = await startServer(env)
  servers.push(server)
  return server
}

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabase(), SANDBOX_MODULE_LATENCY_MS: "2500", SOURCE_RETRY_INITIAL_MS: "50", INLINE_CLAIM_TTL_MS: "3000" }
  // no per-minute limit: the waits below poll every 50 ms, and a 429 would hold them to the next minute
  const account = await cliAccount(env, {
    owner: "Ops",
    plan: "custom",
    custom: ["--plate-queries", "1000", "--unique-plates", "1000", "--module-queries", "1000", "--rpm", "unlimited"],
    environments: ["sandbox"]
  })
  accountId = account.id
  key = account.keys.sandbox
})

afterAll(async () => {
  for (const server of servers) if (server.child.exitCode === null) await server.stop("SIGKILL")
})

const api = (server: ServerProcess) => apiOf(server.sandboxUrl, key)

/** The operation once final, as the API answers it on the wire. */
const finished = async (server: ServerProcess, id: string, deadline: Duration.Input) => {
  await api(server).client.waitForOperation(id, { deadline })
  return (await api(server).answer((c) => c.operations.getOperation({ params: { id } }))).body
}

describe("kill -9 in the middle of operations", () => {
  it("after the restart every operation finishes, and nothing is charged twice", async () => {
    const first = await start()
    const requests = [
      { plate: "AC321DE", modules: ["fines", "vtv", "gnc"] },
      { plate: "AC322DE", modules: ["tax_debt"] },
      { plate: "AC323DE", modules: ["fines", "vtv"] },
      { plate: "AC324DE", modules: ["fines", "vtv", "tax_debt", "gnc"] }
    ]
    const ids: Array<string> = []
    for (const { modules, plate } of requests) {
      const created = await api(first).answer((c) => c.operations.createModulesOperation({ params: { plate }, payload: { modules } }))
      expect(created.status).toBe(202)
      ids.push(created.body.id)
    }
    const search = await api(first).answer((c) => c.vehicles.getVehicle({ params: { plate: "AB202CD" }, query: { onMiss: "search" } }))
    expect(search.status).toBe(202)
    const searchId = search.body.id as string
    await waitFor(async () => ((await api(first).client.operations.getOperation({ params: { id: ids[0]! } })).status === "processing" ? true : undefined), "processing")
    expect(await first.stop("SIGKILL")).toBeNull()

    const second = await start()
    await waitFor(() => (/resuming \d+ unfinished operation/.test(second.output()) ? true : undefined), "the resume")
    const done = []
    for (const id of [...ids, searchId]) done.push(await finished(second, id, "30 seconds"))
    for (const [i, operation] of done.slice(0, ids.length).entries()) {
      expectShape(operation, ModulesOperation)
      expect(Object.values(operation.modules).map((m: any) => m.status)).toEqual(requests[i]!.modules.map(() => "completed"))
    }
    expect(done.at(-1)).toMatchObject({ kind: "vehicle", status: "completed" })
    const usage = await api(second).client.metering.getUsage()
    expect(usage.data.moduleQueries.used).toBe(requests.reduce((n, r) => n + r.modules.length, 0))
    expect(usage.data.plateQueries.used).toBe(1)
    expect(await second.stop("SIGTERM")).toBe(0)
  }, 90_000)
  it("an operation committed whose client left before the engine had it is started by the running server", async () => {
    const server = await start()
    await waitFor(() => (/sandbox API listening/.test(server.output()) ? true : undefined), "the listeners")
    // what a request interrupted right after its commit leaves behind: a queued operation nobody runs
    const id = "op_01KFAULTCLIENTGONE0000000"
    const db = new Pg.Client({ connectionString: env.DATABASE_URL })
    await db.connect()
    try {
      await db.query(
        `insert into operations (id, account_id, environment, kind, plate, modules_key, status, input, created_at, updated_at)
         values ($1, $2, 'sandbox', 'modules', 'AC330DE', 'vtv', 'queued', $3, now(), now())`,
        [id, accountId, JSON.stringify({ kind: "modules", modules: ["vtv"] })]
      )
      await db.query(`insert into operation_modules (operation_id, module, status, updated_at) values ($1, 'vtv', 'queued', now())`, [id])
    } finally {
      await db.end()
    }
    // the sweep takes it up within a second, and it runs for 2.5 s; the deadline leaves room for a
    // loaded machine (CI runs files side by side)
    const done = await finished(server, id, "45 seconds")
    expect(done).toMatchObject({ status: "completed", modules: { vtv: { status: "completed" } } })
  }, 90_000)
})
