/**
 * Operations through the real server with the inline engine: a module query polled to the end,
 * and an operation surviving `kill -9` of the server (resumed on the next start, charged once).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { expectShape, ModulesOperation } from "../support/SpecShapes.js"
import { json } from "../support/TestApp.js"

let env: Record<string, string>
let key: string
const servers: Array<ServerProcess> = []

const start = async () => {
  const server = await startServer(env)
  servers.push(server)
  return server
}

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabase(), SANDBOX_MODULE_LATENCY_MS: "2500", SOURCE_RETRY_INITIAL_MS: "50" }
  const account = JSON.parse((await runVda(["accounts", "create", "--owner", "Ops", "--plan", "growth", "--json"], env)).stdout)
  key = JSON.parse((await runVda(["keys", "create", "--account", account.id, "--environment", "sandbox", "--json"], env)).stdout).key
})

afterAll(async () => {
  for (const server of servers) if (server.child.exitCode === null) await server.stop("SIGKILL")
})

const request = (server: ServerProcess, path: string, init: RequestInit = {}) =>
  fetch(`${server.sandboxUrl}${path}`, { ...init, headers: { "x-api-key": key, "content-type": "application/json", ...init.headers } })

describe("operations on the real server", () => {
  it("survive kill -9: the next start resumes them, and nothing is charged twice", async () => {
    const first = await start()
    const created = await request(first, "/v2/vehicles/AC321DE/modules", { method: "POST", body: JSON.stringify({ modules: ["fines", "vtv", "gnc"] }) })
    expect(created.status).toBe(202)
    const { id } = await json(created)
    await waitFor(async () => ((await json(await request(first, `/v2/operations/${id}`))).status === "processing" ? true : undefined), "processing")
    expect(await first.stop("SIGKILL")).toBeNull()

    const second = await start()
    await waitFor(() => (second.output().includes("resuming 1 unfinished operation") ? true : undefined), "the resume")
    const done = await waitFor(async () => {
      const body = await json(await request(second, `/v2/operations/${id}`))
      return body.status === "completed" ? body : undefined
    }, "the resumed operation to complete")
    expectShape(done, ModulesOperation)
    expect(Object.values(done.modules).map((m: any) => m.status)).toEqual(["completed", "completed", "completed"])
    const usage = await json(await request(second, "/v2/usage"))
    expect(usage.data.moduleQueries.used).toBe(3)
    expect(await second.stop("SIGTERM")).toBe(0)
  })
})
