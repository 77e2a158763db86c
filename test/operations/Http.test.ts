/**
 * Module operations and vehicle searches through the real application with the inline engine
 * (sandbox sources with a short simulated latency and short retry delays).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ErrorResponse, expectShape, ModulesOperation, VehicleOperation } from "../support/SpecShapes.js"
import { waitFor } from "../support/Processes.js"
import { ManualClock } from "../support/ManualClock.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

let app: TestApp
const clock = new ManualClock(Date.now())

beforeAll(async () => {
  clock.follow()
  app = await makeTestApp({ clock, config: { SANDBOX_MODULE_LATENCY_MS: "150", SOURCE_RETRY_INITIAL_MS: "20" } })
})
afterAll(() => app.dispose())

const post = (account: TestAccount, plate: string, body: unknown, environment: "sandbox" | "production" = "sandbox") => {
  const call = environment === "sandbox" ? app.sandbox : app.production
  const key = environment === "sandbox" ? account.sandbox.key : account.production.key
  return call(`/v2/vehicles/${plate}/modules`, withKey(key, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body)
  }))
}

const poll = (account: TestAccount, id: string, environment: "sandbox" | "production" = "sandbox") =>
  (environment === "sandbox" ? app.sandbox : app.production)(`/v2/operations/${id}`, withKey(
    environment === "sandbox" ? account.sandbox.key : account.production.key
  ))

const final = async (account: TestAccount, id: string, environment: "sandbox" | "production" = "sandbox") =>
  waitFor(async () => {
    const body = await json(await poll(account, id, environment))
    return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
  }, `operation ${id} to finish`, 20_000)

const usage = async (account: TestAccount, environment: "sandbox" | "production" = "sandbox") =>
  (await json(await (environment === "sandbox" ? app.sandbox : app.production)(
    "/v2/usage",
    withKey(environment === "sandbox" ? account.sandbox.key : account.production.key)
  ))).data

describe("POST /v2/vehicles/{plate}/modules: bad input consumes nothing", () => {
  it("answers each problem with its code", async () => {
    clock.set(Math.floor(Date.now() / 60_000) * 60_000 + 30_000) // one minute window for the whole test
    const account = await app.createAccount({ plan: "free" })
    const cases: Array<[string, unknown, number, string]> = [
      ["AB123CD", "{not json", 400, "invalid_request"],
      ["AB123CD", {}, 400, "invalid_request"],
      ["AB123CD", { modules: [] }, 400, "invalid_request"],
      ["AB123CD", { modules: ["fines", "vtv", "tax_debt", "gnc", "fines"] }, 400, "invalid_request"],
      ["AB123CD", { modules: ["fines"], priority: "high" }, 400, "invalid_request"],
      ["AB123CD", { modules: "fines" }, 400, "invalid_request"],
      ["AB123CD", { modules: [1] }, 400, "invalid_request"],
      ["AB123CD", { modules: ["fines", "radar"] }, 400, "unsupported_module"],
      ["AB123CD", { modules: ["vtv", "vtv"] }, 400, "duplicate_module"],
      ["AB-123", { modules: ["fines"] }, 400, "invalid_plate"],
      ["AB123CD", { modules: ["fines", "tax_debt"] }, 403, "module_not_enabled"]
    ]
    for (const [plate, body, status, code] of cases) {
      const res = await post(account, plate, body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      const error = await json(res)
      expectShape(error, ErrorResponse(code))
    }
    const after = await usage(account)
    clock.follow()
    expect(after.moduleQueries.used).toBe(0)
    expect(after.requests.used).toBe(cases.length + 1)
  })

  it("messages name the module at fault", async () => {
    const account = await app.createAccount({ plan: "free" })
    expect((await json(await post(account, "AB123CD", { modules: ["radar"] }))).error.message).toContain("radar")
    expect((await json(await post(account, "AB123CD", { modules: ["gnc"] }))).error.message).toContain("gnc")
  })
})

describe("creating and reusing operations", () => {
  it("a new operation is 202 with Location and consumes one module query per module", async () => {
    const account = await app.createAccount()
    const res = await post(account, "ab765cd", { modules: ["gnc", "fines"] })
    expect(res.status).toBe(202)
    const operation = await json(res)
    expectShape(operation, ModulesOperation)
    expect(operation).toMatchObject({ kind: "modules", plate: "AB765CD", status: expect.stringMatching(/queued|processing/) })
    expect(operation.id).toMatch(/^op_[0-9A-Z]{26}$/)
    expect(Object.keys(operation.modules)).toEqual(["fines", "gnc"])
    expect(res.headers.get("location")).toBe(`/v2/operations/${operation.id}`)
    const after = await usage(account)
    expect(after.moduleQueries.used).toBe(2)
    expect(after.byVersion.v2.moduleQueries).toBe(2)
    expect(after.plateQueries.used).toBe(0)
  })

  it("an identical active operation is reused (200, nothing consumed); another set runs on its own; a final one is not reused", async () => {
    const account = await app.createAccount()
    const first = await json(await post(account, "AB766CD", { modules: ["fines", "vtv"] }))
    const again = await post(account, "AB766CD", { modules: ["vtv", "fines"] })
    expect(again.status).toBe(200)
    expect(again.headers.get("location")).toBeNull()
    expect((await json(again)).id).toBe(first.id)
    const other = await post(account, "AB766CD", { modules: ["fines"] })
    expect(other.status).toBe(202)
    expect((await usage(account)).moduleQueries.used).toBe(3)
    await final(account, first.id)
    const afterFinal = await post(account, "AB766CD", { modules: ["fines", "vtv"] })
    expect(afterFinal.status).toBe(202)
    expect((await json(afterFinal)).id).not.toBe(first.id)
    expect((await usage(account)).moduleQueries.used).toBe(5)
  })

  it("identical requests at the same time: exactly one 202, the others 200 with the same operation, N consumed", async () => {
    const account = await app.createAccount()
    const responses = await Promise.all(Array.from({ length: 8 }, () => post(account, "AB767CD", { modules: ["fines", "vtv", "gnc"] })))
    const statuses = responses.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 202])
    const ids = new Set(await Promise.all(responses.map(async (r) => (await json(r)).id)))
    expect(ids.size).toBe(1)
    expect((await usage(account)).moduleQueries.used).toBe(3)
  })

  it("at the quota's edge, identical requests at the same time reuse the one that fit: one 202, never a 429 or a 500", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { moduleQueriesMonthly: 3, requestsPerMinute: null })))
    const responses = await Promise.all(Array.from({ length: 10 }, () => post(account, "AB777CD", { modules: ["fines", "vtv", "gnc"] })))
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 202])
    expect(new Set(await Promise.all(responses.map(async (r) => (await json(r)).id))).size).toBe(1)
    expect((await usage(account)).moduleQueries.used).toBe(3)
  })

  it("on production, where operations finish at once, identical requests never give a 500 and charge each operation once", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { requestsPerMinute: null })))
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(account, "AB778CD", { modules: ["fines", "vtv"] }, "production"))
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses.every((s) => s === 200 || s === 202)).toBe(true)
    const created = statuses.filter((s) => s === 202).length
    const used = (await json(await app.production("/v2/usage", withKey(account.production.key)))).data.moduleQueries.used
    expect(used).toBe(2 * created)
  })

  it("the module quota is exact: 429 module_queries when N do not fit, nothing consumed", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { moduleQueriesMonthly: 3 })))
    const tooMany = await post(account, "AB768CD", { modules: ["fines", "vtv", "tax_debt", "gnc"] })
    expect(tooMany.status).toBe(429)
    const body = await json(tooMany)
    expectShape(body, ErrorResponse("quota_exceeded", true))
    expect(body.error.details).toMatchObject({ meter: "module_queries", limit: 3, used: 0 })
    expect(tooMany.headers.get("retry-after")).not.toBeNull()
    expect((await post(account, "AB768CD", { modules: ["fines", "vtv", "tax_debt"] })).status).toBe(202)
    expect((await post(account, "AB769CD", { modules: ["gnc"] })).status).toBe(429)
    expect((await usage(account)).moduleQueries.used).toBe(3)
  })

  it("custom plans count each module, at the price frozen for the month", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { modulePriceArs: 700, includedModules: 1 })))
    await post(account, "AB770CD", { modules: ["fines", "vtv"] })
    await post(account, "AB771CD", { modules: ["fines"] })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { modulePriceArs: 999 })))
    const { modules } = await usage(account)
    expect(modules.fines).toEqual({ used: 2, included: 1, overage: 1, unitPriceCents: 70000, currency: "ARS" })
    expect(modules.vtv).toEqual({ used: 1, included: 1, overage: 0, unitPriceCents: 70000, currency: "ARS" })
  })
})

describe("polling", () => {
  it("goes from queued/processing to a final state, modules landing as they finish; polling consumes nothing", async () => {
    const account = await app.createAccount()
    const created = await json(await post(account, "AB772CD", { modules: ["fines", "vtv", "tax_debt", "gnc"] }))
    const seen = new Set<string>([created.status])
    const done = await waitFor(async () => {
      const body = await json(await poll(account, created.id))
      expectShape(body, ModulesOperation)
      seen.add(body.status)
      return body.status === "completed" ? body : undefined
    }, "completion")
    expect([...seen].some((s) => s === "queued" || s === "processing")).toBe(true)
    for (const module of ["fines", "vtv", "tax_debt", "gnc"]) {
      expect(done.modules[module]).toMatchObject({ status: "completed", error: null })
      expect(done.modules[module].data.total).toBeGreaterThanOrEqual(0)
    }
    expect(Date.parse(done.updatedAt)).toBeGreaterThan(Date.parse(done.createdAt))
    const after = await usage(account)
    expect(after.moduleQueries.used).toBe(4)
    expect(after.plateQueries.used).toBe(0)
  })

  it("only the caller's account and environment can read an operation", async () => {
    const owner = await app.createAccount()
    const stranger = await app.createAccount()
    const { id } = await json(await post(owner, "AB773CD", { modules: ["fines"] }))
    for (const res of [
      await poll(stranger, id),
      await poll(owner, id, "production"),
      await poll(owner, "op_01M80000000000000000000000")
    ]) {
      expect(res.status).toBe(404)
      expectShape(await json(res), ErrorResponse("operation_not_found"))
    }
  })
})

describe("sandbox scenarios end in the right statuses", () => {
  const run = async (plate: string, modules: Array<string>) => {
    const account = await app.createAccount()
    const { id } = await json(await post(account, plate, { modules }))
    return final(account, id)
  }

  it("default: realistic data, completed", async () => {
    const done = await run("AB774CD", ["fines", "vtv", "tax_debt", "gnc"])
    expect(done.status).toBe("completed")
  })

  it("clean (000): no fines, no debt, VTV approved and current, no GNC", async () => {
    const done = await run("AB000CD", ["fines", "vtv", "tax_debt", "gnc"])
    expect(done.status).toBe("completed")
    expect(done.modules.fines.data).toEqual({ total: 0, amountTotal: 0, currency: "ARS", items: [] })
    expect(done.modules.tax_debt.data.total).toBe(0)
    expect(done.modules.gnc.data.total).toBe(0)
    expect(done.modules.vtv.data.items[0].result).toBe("approved")
    expect(Date.parse(done.modules.vtv.data.items[0].dueDate)).toBeGreaterThan(Date.now())
  })

  it("debt (111): several fines and tax-debt items", async () => {
    const done = await run("AB111CD", ["fines", "tax_debt"])
    expect(done.status).toBe("completed")
    expect(done.modules.fines.data.total).toBeGreaterThanOrEqual(3)
    expect(done.modules.tax_debt.data.total).toBeGreaterThanOrEqual(2)
    expect(done.modules.fines.data.amountTotal).toBeGreaterThan(0)
  })

  it("partial (222): one module fails (retryable), one has reduced coverage", async () => {
    const done = await run("AB222CD", ["fines", "vtv", "gnc"])
    expect(done.status).toBe("partial")
    expect(done.modules.fines).toMatchObject({ status: "failed", data: null, error: { code: "module_unavailable", retryable: true } })
    expect(done.modules.vtv).toMatchObject({ status: "partial", error: null, warnings: [{ code: "reduced_coverage" }] })
    expect(done.modules.gnc).toMatchObject({ status: "completed" })
    expect(done.modules.gnc.warnings).toBeUndefined()
  })

  it("unavailable (333): every module fails, retryable; failed (444): not retryable", async () => {
    const unavailable = await run("AB333CD", ["fines", "vtv"])
    expect(unavailable.status).toBe("failed")
    expect(unavailable.modules.fines.error).toMatchObject({ code: "module_unavailable", retryable: true })
    const failed = await run("AB444CD", ["fines"])
    expect(failed.status).toBe("failed")
    expect(failed.modules.fines).toMatchObject({ data: null, error: { retryable: false } })
  })
})

describe("onMiss=search", () => {
  it("a cache miss is accepted as a vehicle search (202, Location, one plate query) and answered by polling", async () => {
    const account = await app.createAccount()
    const res = await app.sandbox("/v2/vehicles/AB202CD?onMiss=search&classification=true", withKey(account.sandbox.key))
    expect(res.status).toBe(202)
    const accepted = await json(res)
    expectShape(accepted, VehicleOperation)
    expect(accepted).toMatchObject({ kind: "vehicle", plate: "AB202CD", result: null })
    expect(res.headers.get("location")).toBe(`/v2/operations/${accepted.id}`)
    const done = await final(account, accepted.id)
    expectShape(done, VehicleOperation)
    expect(done.status).toBe("completed")
    expect(done.result).toMatchObject({ success: true, found: true, data: { plate: "AB202CD", sandbox: true } })
    expect(done.result.data.classification).toBeDefined()
    await poll(account, accepted.id)
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(1)
    expect(after.uniquePlates.used).toBe(1)
  })

  it("a plate that is not a miss is answered at once, even with onMiss", async () => {
    const account = await app.createAccount()
    const res = await app.sandbox("/v2/vehicles/AB203CD?onMiss=search", withKey(account.sandbox.key))
    expect(res.status).toBe(200)
    expect((await json(res)).found).toBe(true)
  })

  it("needs a paid plan", async () => {
    const account = await app.createAccount({ plan: "free" })
    const res = await app.sandbox("/v2/vehicles/AB202CD?onMiss=search", withKey(account.sandbox.key))
    expect(res.status).toBe(403)
    expectShape(await json(res), ErrorResponse("access_denied"))
    expect((await usage(account)).plateQueries.used).toBe(0)
  })

  it("only accepts the value search", async () => {
    const account = await app.createAccount()
    const res = await app.sandbox("/v2/vehicles/AB202CD?onMiss=wait", withKey(account.sandbox.key))
    expect(res.status).toBe(400)
    expectShape(await json(res), ErrorResponse("invalid_request"))
  })
})
