/**
 * v1 reports in-process, on the inline engine: accepted atomically (plate query, unique plate, one
 * module query per enabled module, the report), reused while active, refused consuming nothing,
 * and run to the end in every sandbox scenario with the digest matching the results.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { digestOf } from "../../src/reports/Digest.js"
import { expectShape } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"
import { V1Error, V1Report } from "../support/V1Shapes.js"

let app: TestApp
beforeAll(async () => {
  app = await makeTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", SOURCE_RETRY_INITIAL_MS: "10" } })
})
afterAll(() => app?.dispose())

const get = (account: TestAccount, path: string) => app.sandbox(path, withKey(account.sandbox.key))
const post = (account: TestAccount, body: unknown) =>
  app.sandbox("/v1/reports", withKey(account.sandbox.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }))
const usage = async (account: TestAccount) => (await json(await get(account, "/v2/usage"))).data

const finished = async (account: TestAccount, id: string) => {
  const deadline = Date.now() + 15_000
  for (;;) {
    const body = await json(await get(account, `/v1/reports/${id}`))
    if (body.data.completedAt !== null) return body
    if (Date.now() > deadline) throw new Error(`report ${id} did not finish`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("POST /v1/reports", () => {
  it("202 with Location, everything charged at once under v1; an identical request reuses it (200, nothing charged)", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const res = await post(account, { plate: "ae100fg" })
    expect(res.status).toBe(202)
    const body = await json(res)
    expectShape(body, V1Report)
    expect(body.data).toMatchObject({ id: expect.stringMatching(/^rep_[0-9A-Z]{26}$/), plate: "AE100FG", report: null, completedAt: null })
    expect(res.headers.get("location")).toBe(`/v1/reports/${body.data.id}`)
    const again = await post(account, { plate: "AE100FG" })
    expect(again.status).toBe(200)
    expect((await json(again)).data.id).toBe(body.data.id)

    const after = await usage(account)
    expect({ plate: after.plateQueries.used, modules: after.moduleQueries.used, unique: after.uniquePlates.used }).toEqual({ plate: 1, modules: 4, unique: 1 })
    expect(after.byVersion).toEqual({ v1: { plateQueries: 1, moduleQueries: 4, reports: 1 }, v2: { plateQueries: 0, moduleQueries: 0, reports: 0 } })

    const done = await finished(account, body.data.id)
    expectShape(done, V1Report)
    expect(done.data.status).toBe("completed")
    expect(Object.keys(done.data.report.results)).toEqual(["fines", "vtv", "tax_debt", "gnc"])
    expect(done.data.report.vehicle).toMatchObject({ plate: "AE100FG" })
    expect(done.data.report.digest).toEqual(digestOf(done.data.report.results, done.data.updatedAt.slice(0, 10)))
    expect((await post(account, { plate: "AE100FG" })).status).toBe(202) // a final report is not reused
  })

  it("only the account's enabled modules: a free account's report has fines and vtv", async () => {
    const account = await app.createAccount({ plan: "free" })
    const { data } = await json(await post(account, { plate: "AE101FG" }))
    expect((await usage(account)).moduleQueries.used).toBe(2)
    const done = await finished(account, data.id)
    expect(Object.keys(done.data.report.results)).toEqual(["fines", "vtv"])
    expect(done.data.report.digest).toMatchObject({ taxDebtCount: 0, gncStatus: "unknown" })
  })

  it("over any limit: 429 in v1's envelope and nothing consumed, not even the plate query", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { moduleQueriesMonthly: 3, requestsPerMinute: null })))
    const res = await post(account, { plate: "AE102FG" })
    expect(res.status).toBe(429)
    expectShape(await json(res), V1Error("quota_exceeded", true))
    const after = await usage(account)
    expect({ plate: after.plateQueries.used, modules: after.moduleQueries.used, unique: after.uniquePlates.used }).toEqual({ plate: 0, modules: 0, unique: 0 })
    expect(after.byVersion.v1).toBeUndefined()
  })

  it("bad requests: 400 in v1's envelope, nothing consumed", async () => {
    const account = await app.createAccount({ plan: "growth" })
    expectShape(await json(await post(account, { plate: "A1B" })), V1Error("invalid_plate"))
    expectShape(await json(await post(account, {})), V1Error("invalid_request"))
    expectShape(await json(await post(account, { plate: "AE103FG", modules: ["fines"] })), V1Error("invalid_request"))
    expect((await usage(account)).plateQueries.used).toBe(0)
  })

  it("polling: the account's own reports only; a report is not a v2 operation", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const other = await app.createAccount({ plan: "growth" })
    const { data } = await json(await post(account, { plate: "AE104FG" }))
    expectShape(await json(await get(other, `/v1/reports/${data.id}`)), V1Error("operation_not_found"))
    expectShape(await json(await get(account, "/v1/reports/rep_unknown")), V1Error("operation_not_found"))
    expect((await get(account, `/v2/operations/${data.id}`)).status).toBe(404)
    await finished(account, data.id)
  })
})

describe("reports in every sandbox scenario", () => {
  const cases = [
    { plate: "AE000FG", status: "completed", vehicle: true, modules: ["completed", "completed", "completed", "completed"] },
    { plate: "AE111FG", status: "completed", vehicle: true, modules: ["completed", "completed", "completed", "completed"] },
    { plate: "AE222FG", status: "partial", vehicle: true, modules: ["failed", "partial", "completed", "completed"] },
    { plate: "AE333FG", status: "failed", vehicle: false, modules: ["failed", "failed", "failed", "failed"] },
    { plate: "AE444FG", status: "partial", vehicle: false, modules: ["failed", "failed", "failed", "failed"] },
    { plate: "AE404FG", status: "partial", vehicle: false, modules: ["completed", "completed", "completed", "completed"] }
  ] as const
  for (const c of cases) {
    it(`${c.plate}: ${c.status}, vehicle ${c.vehicle ? "found" : "null"}, digest from the results`, async () => {
      const account = await app.createAccount({ plan: "growth" })
      const { data } = await json(await post(account, { plate: c.plate }))
      const done = await finished(account, data.id)
      expectShape(done, V1Report)
      const { report, status } = done.data
      expect(status).toBe(c.status)
      expect(report.vehicle === null).toBe(!c.vehicle)
      expect(Object.values(report.results).map((m: any) => m.status)).toEqual(c.modules)
      expect(report.digest).toEqual(digestOf(report.results, done.data.updatedAt.slice(0, 10)))
      if ((c.modules as ReadonlyArray<string>).includes("failed")) expect(report.digest.alerts).toContain("module_unavailable")
    })
  }
})

describe("report events", () => {
  it("a final report's event is v1's report event, the polled report with the event's id and name", async () => {
    const account = await app.createAccount({ plan: "growth" })
    await app.sandbox("/v1/webhooks/config", withKey(account.sandbox.key, {
      method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://127.0.0.1:9/hook", enabled: true })
    }))
    const { data } = await json(await post(account, { plate: "AE105FG" }))
    const done = await finished(account, data.id)
    const deadline = Date.now() + 10_000
    let delivery: any
    while (delivery === undefined && Date.now() < deadline) {
      delivery = (await json(await get(account, "/v2/webhooks/deliveries"))).deliveries[0]
      if (delivery === undefined) await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(delivery).toMatchObject({ event: "report.completed", apiVersion: "v1" })
    expect(delivery.payload).toEqual({ eventId: `evt_${delivery.id}`, event: "report.completed", ...done.data })
  })
})
