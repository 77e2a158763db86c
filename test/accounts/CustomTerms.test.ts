/**
 * The terms a custom plan starts from: the allowances and modules of CUSTOM_PLAN_BASE as the
 * plans table holds them (never a copy of its numbers), with the table's default module price.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { CUSTOM_PLAN_BASE } from "../../src/principal/Domain.js"
import { makeTestApp, type TestApp } from "../support/TestApp.js"

let app: TestApp

beforeAll(async () => {
  app = await makeTestApp()
})
afterAll(() => app.dispose())

const TERMS = `plate_queries_monthly, module_queries_monthly, unique_plates_daily, requests_per_minute, enabled_modules`

const basePlan = () =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`select ${TERMS} from plans where id = $1`, [CUSTOM_PLAN_BASE])))

const customTerms = (accountId: string) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`select ${TERMS}, module_price_ars, included_modules from custom_plans where account_id = $1`, [accountId])))

const createAccount = (plan: "growth" | "custom") =>
  app.run(Effect.flatMap(Accounts, (accounts) => accounts.create({ owner: "Terms", plan, timezone: "America/Argentina/Buenos_Aires" })))

describe("custom plan terms", () => {
  it("start from the base plan's allowances and modules, at the default module price", async () => {
    const [base] = await basePlan()
    expect(base).toMatchObject({ requestsPerMinute: 240, enabledModules: ["fines", "vtv", "tax_debt", "gnc"] })
    const account = await createAccount("custom")
    expect(await customTerms(account.id)).toEqual([{ ...base, modulePriceArs: 550, includedModules: 0 }])
  })

  it("follow the plans table: a changed base plan is what the next account moved to custom gets", async () => {
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe(`update plans set plate_queries_monthly = null, requests_per_minute = 300, enabled_modules = '{fines,gnc}'
                  where id = $1`, [CUSTOM_PLAN_BASE])))
    const [base] = await basePlan()

    const moved = await createAccount("growth")
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setPlan(moved.id, "custom")))
    expect(await customTerms(moved.id)).toEqual([{ ...base, modulePriceArs: 550, includedModules: 0 }])

    const changed = await createAccount("growth")
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setCustom(changed.id, { requestsPerMinute: 50 })))
    expect(await customTerms(changed.id)).toEqual([
      { plateQueriesMonthly: null, moduleQueriesMonthly: 15_000, uniquePlatesDaily: 5_000, requestsPerMinute: 50,
        enabledModules: ["fines", "gnc"], modulePriceArs: 550, includedModules: 0 }
    ])
  })

  it("are kept when an account with terms of its own moves back to custom", async () => {
    const account = await createAccount("growth")
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setCustom(account.id, { modulePriceArs: 700, requestsPerMinute: 10 })))
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setPlan(account.id, "growth")))
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setPlan(account.id, "custom")))
    expect(await customTerms(account.id)).toMatchObject([{ modulePriceArs: 700, requestsPerMinute: 10 }])
  })
})
