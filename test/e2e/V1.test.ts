/**
 * v1 on the real server process, on both listeners: the vehicle query, module operations, status
 * and webhook configuration answer in v1's shapes and envelope, drawing on the same allowance
 * as v2. (Events and the test event: e2e/Webhooks.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { expectShape } from "../support/SpecShapes.js"
import { json } from "../support/TestApp.js"
import { apiOf } from "../support/ApiClient.js"
import { V1BasicVehicle, V1Error, V1ModulesOperation, V1Report, V1Status, V1WebhookConfig } from "../support/V1Shapes.js"

let server: ServerProcess
const keys = {} as Record<"production" | "sandbox", string>

beforeAll(async () => {
  const env = { DATABASE_URL: await freshDatabase(), SANDBOX_MODULE_LATENCY_MS: "50" }
  Object.assign(keys, (await cliAccount(env, { owner: "Legacy", plan: "basic", environments: ["production", "sandbox"] })).keys)
  server = await startServer(env)
}, 60_000)
afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
})

const api = (environment: "production" | "sandbox") =>
  apiOf(environment === "production" ? server.productionUrl : server.sandboxUrl, keys[environment])

describe("v1 on the server process", () => {
  it("the sandbox: a basic query, a module operation polled to the end, status counting both under one allowance", async () => {
    const sandbox = api("sandbox")
    const vehicle = await sandbox.answer((c) => c.v1.v1GetBasicVehicle({ query: { plate: "AB123CD" } }))
    expect(vehicle.status).toBe(200)
    expectShape(vehicle.body, V1BasicVehicle)
    expect((await sandbox.answer((c) => c.vehicles.getVehicle({ params: { plate: "AB124CD" }, query: {} }))).status).toBe(200)

    const created = await sandbox.answer((c) => c.v1.v1CreateModulesOperation({ payload: { plate: "AB123CD", modules: ["vtv"] } }))
    expect(created.status).toBe(202)
    const { data } = created.body
    const done = await waitFor(async () => {
      const { body } = await sandbox.answer((c) => c.v1.v1GetModulesOperation({ params: { id: data.id } }))
      return body.data.completedAt !== null ? body : undefined
    }, "the v1 operation")
    expectShape(done, V1ModulesOperation)

    const status = await sandbox.answer((c) => c.v1.v1GetStatus())
    expectShape(status.body, V1Status)
    expect(status.body.data).toMatchObject({ plan: "starter", usage: { fast: { used: 2 }, intelligent: { used: 1 }, miss: { used: 2 } }, customBilling: null })
    const usage = (await sandbox.client.metering.getUsage()).data
    expect(usage.byVersion).toEqual({ v1: { plateQueries: 1, moduleQueries: 1, reports: 0 }, v2: { plateQueries: 1, moduleQueries: 0, reports: 0 } })
  })

  it("a report on the server: 202, polled to its digest, charged once under v1 (reuse: test/reports)", async () => {
    const sandbox = api("sandbox")
    const before = (await sandbox.client.metering.getUsage()).data
    const created = await sandbox.answer((c) => c.v1.v1CreateReport({ payload: { plate: "AB125CD" } }))
    expect(created.status).toBe(202)
    const { data } = created.body
    const done = await waitFor(async () => {
      const { body } = await sandbox.answer((c) => c.v1.v1GetReport({ params: { id: data.id } }))
      return body.data.completedAt !== null ? body : undefined
    }, "the report")
    expectShape(done, V1Report)
    expect(done.data).toMatchObject({ status: "completed", report: { vehicle: { plate: "AB125CD" } } })
    const after = (await sandbox.client.metering.getUsage()).data
    expect({
      reports: after.byVersion.v1!.reports - (before.byVersion.v1?.reports ?? 0),
      modules: after.moduleQueries.used - before.moduleQueries.used,
      plates: after.plateQueries.used - before.plateQueries.used
    }).toEqual({ reports: 1, modules: 4, plates: 1 })
    const refused = await sandbox.answer((c) => c.v1.v1CreateReport({ payload: { plate: "nope" } }))
    expect(refused.status).toBe(400)
    expectShape(refused.body, V1Error("invalid_plate"))
    expect(refused.error).toMatchObject({ code: "invalid_plate", status: 400 })
  })

  it("production: its own counters and configuration; refusals in v1's envelope", async () => {
    const production = api("production")
    const config = await production.answer((c) => c.v1.v1GetWebhookConfig())
    expectShape(config.body, V1WebhookConfig)
    const status = await production.client.v1.v1GetStatus()
    expect(status.data.usage.fast.used).toBe(0)
    const refused = await production.answer((c) => c.v1.v1GetBasicVehicle({ query: { plate: "\u0000" } }))
    expect(refused.status).toBe(400)
    expectShape(refused.body, V1Error("invalid_request"))
    expect(refused.error).toMatchObject({ code: "invalid_request", status: 400 })
    // no key at all: not even an empty header
    const noKey = await fetch(`${server.productionUrl}/v1/status`)
    expect(noKey.status).toBe(401)
    expectShape(await json(noKey), V1Error("invalid_api_key"))
  })
})
