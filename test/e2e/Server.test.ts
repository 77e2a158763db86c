/**
 * The real server process on a given database (DATABASE_URL), driven with the API's client and
 * the CLI (fetch for what takes no key: the probes, OpenAPI and the docs).
 */
import { Effect, type Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type VehicleDataApiError, VehicleDataClient } from "../../src/client/index.js"
import { layerLocalSandbox, layerTest } from "../../src/client/testing.js"
import { freshDatabase } from "../support/Postgres.js"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { ROOT, runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { ErrorResponse, expectShape, PlansResponse, StatusResponse, UsageResponse, VehicleResponse } from "../support/SpecShapes.js"
import { json } from "../support/TestApp.js"
import { apiOf } from "../support/ApiClient.js"

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

/** What takes no key: the probes, OpenAPI and the docs. */
const get = (base: string, path: string) => fetch(`${base}${path}`)

const production = (key = live.key) => apiOf(server.productionUrl, key)
const sandbox = (key = test.key) => apiOf(server.sandboxUrl, key)

describe("the server process", () => {
  it("serves both environments on their own listeners", async () => {
    const status = await production().answer((api) => api.accounts.getStatus())
    expect(status.status).toBe(200)
    expectShape(status.body, StatusResponse)
    const usage = await sandbox().answer((api) => api.metering.getUsage())
    expect(usage.status).toBe(200)
    expectShape(usage.body, UsageResponse)
    expect(usage.body.data.environment).toBe("sandbox")
    expect(usage.value?.data.environment).toBe("sandbox")
    const plans = await production().answer((api) => api.accounts.listPlans())
    expectShape(plans.body, PlansResponse)
    const otherEnvironment = await sandbox(live.key).answer((api) => api.accounts.getStatus())
    expect(otherEnvironment.status).toBe(401)
    expect(otherEnvironment.error).toMatchObject({ code: "invalid_api_key", status: 401 })
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
    expect((await production(extra.key).answer((api) => api.metering.getUsage())).status).toBe(200)
    const revoked = await runVda(["keys", "revoke", extra.id], env)
    expect(revoked.code).toBe(0)
    const res = await production(extra.key).answer((api) => api.metering.getUsage())
    expect(res.status).toBe(401)
    expectShape(res.body, ErrorResponse("invalid_api_key"))
    expect(res.error).toMatchObject({ code: "invalid_api_key", status: 401, requestId: res.body.error.requestId, retryable: false })
  })

  it("a plan change with the CLI applies to the next request", async () => {
    const before = await production().client.metering.getUsage()
    expect(before.data.entitlements.plan).toBe("basic")
    expect((await runVda(["accounts", "set-plan", account.id, "scale"], env)).code).toBe(0)
    const after = await production().client.metering.getUsage()
    expect(after.data.entitlements).toMatchObject({ plan: "scale", requestsPerMinute: 240 })
  })

  it("answers vehicle queries from a registry and catalog imported with the CLI, and from the sandbox", async () => {
    const registry = Path.join(ROOT, "data", "registry.jsonl")
    const catalog = Path.join(ROOT, "data", "catalog.jsonl")
    expect((await runVda(["registry", "import", registry], env)).code).toBe(0)
    expect((await runVda(["catalog", "import", catalog], env)).code).toBe(0)
    const { plate } = JSON.parse((await Fs.readFile(registry, "utf8")).split("\n")[0]!)
    const res = await production().answer((api) =>
      api.vehicles.getVehicle({ params: { plate: plate.toLowerCase() }, query: { codia: true, sheet: true, tires: true } }))
    expect(res.status).toBe(200)
    const body = res.body
    expectShape(body, VehicleResponse)
    expect(body.data.plate).toBe(plate)
    expect(body.data.codia.status).not.toBe("brand_not_found")
    const synthetic = await sandbox().answer((api) =>
      api.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: { sandbox_seed: "e2e", classification: true } }))
    expect(synthetic.status).toBe(200)
    expectShape(synthetic.body, VehicleResponse)
    expect(synthetic.body.data).toMatchObject({ sandbox: true, scenario: "default" })
    expect(synthetic.body.data.classification.confidence).not.toBe("unavailable")
    const invalid = await production().answer((api) => api.vehicles.getVehicle({ params: { plate: "NOT-A-PLATE" }, query: {} }))
    expect(invalid.status).toBe(400)
    expectShape(invalid.body, ErrorResponse("invalid_plate"))
    expect(invalid.error).toMatchObject({ code: "invalid_plate", status: 400 })
  })

  it("never logs API keys", () => {
    expect(server.output()).not.toContain(live.key)
    expect(server.output()).not.toContain(test.key)
  })
})

describe("the client's test support", () => {
  it("a local sandbox client calls this sandbox, and the in-process sandbox answers as it does", async () => {
    const vehicles = [
      { plate: "AB123CD", query: { sandbox_seed: "e2e" } },
      { plate: "KLM456", query: {} },
      { plate: "AB111CD", query: { sandbox_scenario: "debt" as const, sandbox_seed: "other" } },
      { plate: "AB404CD", query: {} },
      { plate: "AB202CD", query: {} },
      { plate: "AB202CD", query: { onMiss: "search" as const } },
      { plate: "AB333CD", query: {} },
      { plate: "AB-123", query: {} }
    ]
    const modules = [
      { plate: "AB000CD", modules: ["fines", "vtv", "tax_debt", "gnc"] },
      { plate: "AB222CD", modules: ["gnc", "fines", "vtv"] },
      { plate: "AB444CD", modules: ["fines"] },
      { plate: "AB123CD", modules: ["fines", "fines"] },
      { plate: "AB123CD", modules: ["speeding"] }
    ]
    /** What a client sees of each request: the answer without its ids and times, or the error without its request id. */
    const seen = (layer: Layer.Layer<VehicleDataClient>) =>
      Effect.runPromise(Effect.provide(
        Effect.gen(function*() {
          const client = yield* Effect.service(VehicleDataClient)
          const outcome = <A>(effect: Effect.Effect<A, { readonly _tag: string; readonly requestId?: string }>) =>
            Effect.match(effect, {
              onSuccess: (value) => ({ value }),
              onFailure: ({ requestId: _requestId, ...error }) => ({ error: { ...error } })
            })
          const answers = yield* Effect.forEach(vehicles, ({ plate, query }) =>
            outcome(Effect.flatMap(client.vehicles.getVehicle({ params: { plate }, query }), (answer): Effect.Effect<unknown, VehicleDataApiError> =>
              "kind" in answer
                ? Effect.map(client.waitForOperation(answer.id, { deadline: "20 seconds" }), (search) =>
                  search.kind === "vehicle" ? { accepted: answer.kind, status: search.status, result: search.result } : search)
                : Effect.succeed(answer))))
          const operations = yield* Effect.forEach(modules, ({ modules, plate }) =>
            outcome(Effect.flatMap(client.operations.createModulesOperation({ params: { plate }, payload: { modules } }), (created) =>
              Effect.map(client.waitForOperation(created.id, { deadline: "20 seconds" }), (final) =>
                final.kind === "modules" ? { status: final.status, plate: final.plate, modules: final.modules } : final))))
          return { answers, operations }
        }),
        layer
      ))
    const remote = await seen(layerLocalSandbox({ apiKey: test.key, baseUrl: server.sandboxUrl, retry: false }))
    expect(remote.answers[0]).toMatchObject({ value: { found: true, data: { plate: "AB123CD", sandbox: true } } })
    expect(remote.answers[5]).toMatchObject({ value: { accepted: "vehicle", status: "completed", result: { found: true } } })
    expect(remote.answers[6]).toMatchObject({ error: { code: "temporarily_unavailable", status: 503, retryAfter: 5 } })
    expect(remote.operations[1]).toMatchObject({ value: { status: "partial" } })
    expect(await seen(layerTest())).toEqual(remote)
  }, 60_000)
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
      const inFlight = apiOf(own.productionUrl, live.key).answer((api) => api.metering.getUsage())
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
      expect(res.body.success).toBe(true)
      expect(res.value?.success).toBe(true)
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
