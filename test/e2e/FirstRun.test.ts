/**
 * `npm start` as a new user runs it: embedded PostgreSQL in DATA_DIR, a demo account on the first
 * run with a working curl line, the CLI beside the running server, and a clean shutdown that stops
 * PostgreSQL too.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stopCluster } from "../../src/platform/db/EmbeddedPostgres.js"
import { ROOT, runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { expectShape, StatusResponse, VehicleResponse } from "../support/SpecShapes.js"
import { makePromiseClient } from "../../src/client/index.js"
import { apiOf } from "../support/ApiClient.js"

let dataDir: string
let env: Record<string, string>

beforeAll(async () => {
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-first-run-"))
  await Fs.chmod(dataDir, 0o755)
  env = { DATA_DIR: dataDir }
})

afterAll(async () => {
  await stopCluster({ clusterDir: Path.join(dataDir, "postgres") }).catch(() => undefined)
  await Fs.rm(dataDir, { recursive: true, force: true })
})

const postmasterRunning = () =>
  Fs.stat(Path.join(dataDir, "postgres", "postmaster.pid")).then(() => true, () => false)

describe("first run on an embedded database", () => {
  let server: ServerProcess

  it("starts, creates a demo account and prints a curl line that works", async () => {
    const started = Date.now()
    server = await startServer(env)
    expect(Date.now() - started).toBeLessThan(20_000)
    const banner = await waitFor(() => /curl -s -H 'x-api-key: (\S+)' (\S+)\n/.exec(server.output()) ?? undefined, "the banner")
    const [, key, url] = banner
    expect(key).toMatch(/^vda_live_/)
    // the listeners open only once the first-run set-up is done
    const output = server.output()
    expect(output.indexOf("demo data imported")).toBeGreaterThan(-1)
    expect(output.indexOf("demo data imported")).toBeLessThan(output.indexOf("production API listening"))
    expect(url).toBe(`${server.productionUrl}/v2/status`)
    const res = await apiOf(server.productionUrl, key!).answer((api) => api.accounts.getStatus())
    expect(res.status).toBe(200)
    const body = res.body
    expectShape(body, StatusResponse)
    expect(body.data).toMatchObject({ owner: "Demo account", plan: "growth" })
    // the sandbox key of the banner, as a new integrator would first use it
    const sandboxKey = /sandbox\s+(vda_test_\S+)/.exec(server.output())?.[1]
    const sandbox = makePromiseClient({ baseUrl: server.sandboxUrl, apiKey: sandboxKey! })
    expect((await sandbox.metering.getUsage()).data.environment).toBe("sandbox")
  })

  it("production queries answer from the demo registry and catalog out of the box", async () => {
    const key = /production\s+(vda_live_\S+)/.exec(server.output())![1]!
    const registry = (await Fs.readFile(Path.join(ROOT, "data", "registry.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l))
    const sample = registry.slice(0, 25)
    const answers = await Promise.all(sample.map(async (vehicle: { plate: string }) => {
      const res = await apiOf(server.productionUrl, key).answer((api) =>
        api.vehicles.getVehicle({ params: { plate: vehicle.plate }, query: { codia: true, classification: true } }))
      expect(res.status).toBe(200)
      expectShape(res.body, VehicleResponse)
      return res.body
    }))
    expect(answers.every((a) => a.found)).toBe(true)
    // most demo vehicles are identified exactly in the demo catalog
    const exact = answers.filter((a) => a.data.codia.status === "exact_match").length
    expect(exact).toBeGreaterThan(sample.length / 2)
    const categories = new Set(answers.map((a) => a.data.classification.vehicleCategory))
    expect(categories.size).toBeGreaterThan(2)
  })

  it("the CLI works beside the running server on the same embedded database and leaves it running", async () => {
    const created = await runVda(["accounts", "create", "--owner", "Beside", "--json"], env)
    expect(created.code, created.stderr).toBe(0)
    const { id } = JSON.parse(created.stdout)
    const key = await runVda(["keys", "create", "--account", id, "--environment", "production", "--json"], env)
    expect(key.code).toBe(0)
    const res = await apiOf(server.productionUrl, JSON.parse(key.stdout).key).answer((api) => api.accounts.getStatus())
    expect(res.status).toBe(200)
    expect(res.body.data.owner).toBe("Beside")
  })

  it("SIGTERM stops the server and its PostgreSQL, exit code 0", async () => {
    expect(await postmasterRunning()).toBe(true)
    expect(await server.stop("SIGTERM")).toBe(0)
    expect(server.output()).toContain("embedded PostgreSQL stopped")
    expect(await postmasterRunning()).toBe(false)
  })

  it("a second start keeps the data and prints no new keys; the CLI alone starts and stops PostgreSQL", async () => {
    const listed = await runVda(["keys", "list", "--account", "acct_none"], env)
    expect(listed.code).toBe(1)
    expect(await postmasterRunning()).toBe(false)

    const again = await startServer(env)
    expect(again.output()).not.toContain("First run")
    expect(await again.stop("SIGTERM")).toBe(0)
  })

  it("after kill -9, the next start adopts the PostgreSQL left running", async () => {
    const first = await startServer(env)
    expect(await first.stop("SIGKILL")).toBeNull()
    expect(await postmasterRunning()).toBe(true)
    const second = await startServer(env)
    expect(second.output()).toContain("already running")
    expect((await fetch(`${second.productionUrl}/readyz`)).status).toBe(200)
    expect(await second.stop("SIGTERM")).toBe(0)
    expect(await postmasterRunning()).toBe(false)
  })
})
