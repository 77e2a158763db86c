/**
 * The real server process on a given database (DATABASE_URL), driven with fetch and the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { ROOT, runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { ErrorResponse, expectShape, PlansResponse, StatusResponse, UsageResponse, VehicleResponse } from "../support/SpecShapes.js"
import { json } from "../support/TestApp.js"

let env: Record<string, string>
let server: ServerProcess
let account: { id: string }
let live: { id: string; key: string }
let test: { id: string; key: string }

const vdaJson = async (...args: Array<string>) => {
  const result = await runVda([...args, "--json"], env)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabase() }
  server = await startServer(env)
  account = await vdaJson("accounts", "create", "--owner", "E2E", "--plan", "basic")
  live = await vdaJson("keys", "create", "--account", account.id, "--environment", "production")
  test = await vdaJson("keys", "create", "--account", account.id, "--environment", "sandbox")
})

afterAll(async () => {
  if (server) await server.stop("SIGKILL")
})

const get = (base: string, path: string, key?: string) =>
  fetch(`${base}${path}`, { headers: key === undefined ? {} : { "x-api-key": key } })

describe("the server process", () => {
  it("serves both environments on their own listeners", async () => {
    const status = await get(server.productionUrl, "/v2/status", live.key)
    expect(status.status).toBe(200)
    expectShape(await json(status), StatusResponse)
    const usage = await get(server.sandboxUrl, "/v2/usage", test.key)
    expect(usage.status).toBe(200)
    const body = await json(usage)
    expectShape(body, UsageResponse)
    expect(body.data.environment).toBe("sandbox")
    const plans = await get(server.productionUrl, "/v2/plans", live.key)
    expectShape(await json(plans), PlansResponse)
    expect((await get(server.sandboxUrl, "/v2/status", live.key)).status).toBe(401)
  })

  it("does not create a demo account when DATABASE_URL is set", () => {
    expect(server.output()).not.toContain("First run")
  })

  it("serves OpenAPI, docs and probes without a key", async () => {
    const spec = await json(await get(server.productionUrl, "/openapi.json"))
    expect(spec.openapi).toMatch(/^3\.1/)
    const docs = await get(server.productionUrl, "/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(await json(await get(server.sandboxUrl, "/healthz"))).toEqual({ status: "ok" })
    const readiness = await json(await get(server.productionUrl, "/readyz"))
    expect(readiness).toEqual({
      status: "ready",
      checks: {
        database: { status: "up", latencyMs: expect.any(Number) },
        workflowEngine: { status: "up", engine: "inline" }
      }
    })
  })

  it("a key revoked with the CLI fails on the very next request to the running server", async () => {
    const extra = await vdaJson("keys", "create", "--account", account.id, "--environment", "production")
    expect((await get(server.productionUrl, "/v2/usage", extra.key)).status).toBe(200)
    const revoked = await runVda(["keys", "revoke", extra.id], env)
    expect(revoked.code).toBe(0)
    const res = await get(server.productionUrl, "/v2/usage", extra.key)
    expect(res.status).toBe(401)
    expectShape(await json(res), ErrorResponse("invalid_api_key"))
  })

  it("a plan change with the CLI applies to the next request", async () => {
    const before = await json(await get(server.productionUrl, "/v2/usage", live.key))
    expect(before.data.entitlements.plan).toBe("basic")
    expect((await runVda(["accounts", "set-plan", account.id, "scale"], env)).code).toBe(0)
    const after = await json(await get(server.productionUrl, "/v2/usage", live.key))
    expect(after.data.entitlements).toMatchObject({ plan: "scale", requestsPerMinute: 240 })
  })

  it("answers vehicle queries from a registry and catalog imported with the CLI, and from the sandbox", async () => {
    const registry = Path.join(ROOT, "data", "registry.jsonl")
    const catalog = Path.join(ROOT, "data", "catalog.jsonl")
    expect((await runVda(["registry", "import", registry], env)).code).toBe(0)
    expect((await runVda(["catalog", "import", catalog], env)).code).toBe(0)
    const { plate } = JSON.parse((await Fs.readFile(registry, "utf8")).split("\n")[0]!)
    const res = await fetch(`${server.productionUrl}/v2/vehicles/${plate.toLowerCase()}?codia=true&sheet=true&tires=true`, {
      headers: { "x-api-key": live.key }
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expectShape(body, VehicleResponse)
    expect(body.data.plate).toBe(plate)
    expect(body.data.codia.status).not.toBe("brand_not_found")
    const sandbox = await fetch(`${server.sandboxUrl}/v2/vehicles/AB123CD?sandbox_seed=e2e&classification=true`, {
      headers: { "x-api-key": test.key }
    })
    expect(sandbox.status).toBe(200)
    const synthetic = await json(sandbox)
    expectShape(synthetic, VehicleResponse)
    expect(synthetic.data).toMatchObject({ sandbox: true, scenario: "default" })
    expect(synthetic.data.classification.confidence).not.toBe("unavailable")
    const invalid = await get(server.productionUrl, "/v2/vehicles/NOT-A-PLATE", live.key)
    expect(invalid.status).toBe(400)
    expectShape(await json(invalid), ErrorResponse("invalid_plate"))
  })

  it("never logs API keys", () => {
    expect(server.output()).not.toContain(live.key)
    expect(server.output()).not.toContain(test.key)
  })
})

describe("shutdown", () => {
  it("SIGTERM lets an in-flight request finish before the process exits with code 0", async () => {
    const own = await startServer(env)
    // Hold the account's per-minute counters (this minute and the next) in an open transaction:
    // the server's request waits on them, so it is provably in flight when the signal arrives.
    // (Observed from a second session: pg_stat_activity is frozen inside a transaction.)
    const blocker = new pg.Client({ connectionString: env.DATABASE_URL })
    const observer = new pg.Client({ connectionString: env.DATABASE_URL })
    await blocker.connect()
    await observer.connect()
    try {
      await blocker.query("begin")
      const minute = Math.floor(Date.now() / 60_000) * 60_000
      for (const start of [minute, minute + 60_000]) {
        await blocker.query(
          `insert into meter_counters (account_id, environment, meter, period_start, used)
           values ($1, 'production', 'requests', $2, 0)
           on conflict (account_id, environment, meter, period_start) do update set used = meter_counters.used`,
          [account.id, new Date(start)]
        )
      }
      const inFlight = fetch(`${own.productionUrl}/v2/usage`, { headers: { "x-api-key": live.key } })
      await waitFor(async () => {
        const { rows } = await observer.query(
          "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()"
        )
        return rows[0].n > 0 ? true : undefined
      }, "the request to wait on the counters")
      own.child.kill("SIGTERM")
      await blocker.query("commit")
      const res = await inFlight
      expect(res.status).toBe(200)
      expect((await json(res)).success).toBe(true)
      expect(await own.exited).toBe(0)
    } finally {
      await blocker.end()
      await observer.end()
    }
  })

  it("SIGTERM closes the listeners and exits with code 0", async () => {
    const own = await startServer(env)
    expect((await get(own.productionUrl, "/healthz")).status).toBe(200)
    expect(await own.stop("SIGTERM")).toBe(0)
    await expect(get(own.productionUrl, "/healthz")).rejects.toThrow()
  })
})
