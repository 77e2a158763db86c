/**
 * The terms a custom plan starts from: the allowances and modules of CUSTOM_PLAN_BASE as the
 * plans table holds them (never a copy of its numbers), with the table's default module price.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { CUSTOM_PLAN_BASE } from "../../src/principal/Domain.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const TERMS = `plate_queries_monthly, module_queries_monthly, unique_plates_daily, requests_per_minute, enabled_modules`

const basePlan = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`select ${TERMS} from plans where id = $1`, [CUSTOM_PLAN_BASE]))

const customTerms = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`select ${TERMS}, module_price_ars, included_modules from custom_plans where account_id = $1`, [accountId]))

const createAccount = (plan: "growth" | "custom") =>
  Effect.flatMap(Accounts, (accounts) => accounts.create({ owner: "Terms", plan, timezone: "America/Argentina/Buenos_Aires" }))

layer(Accounts.layer.pipe(Layer.provideMerge(freshDatabaseLayer(2))), { excludeTestServices: true })("custom plan terms", (it) => {
  it.effect("start from the base plan's allowances and modules, at the default module price", () =>
    Effect.gen(function*() {
      const [base] = yield* basePlan
      expect(base).toMatchObject({ requestsPerMinute: 240, enabledModules: ["fines", "vtv", "tax_debt", "gnc"] })
      const account = yield* createAccount("custom")
      expect(yield* customTerms(account.id)).toEqual([{ ...base, modulePriceArs: 550, includedModules: 0 }])
    }))

  it.effect("follow the plans table: a changed base plan is what the next account moved to custom gets", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const accounts = yield* Accounts
      yield* sql.unsafe(`update plans set plate_queries_monthly = null, requests_per_minute = 300, enabled_modules = '{fines,gnc}'
                         where id = $1`, [CUSTOM_PLAN_BASE])
      const [base] = yield* basePlan

      const moved = yield* createAccount("growth")
      yield* accounts.setPlan(moved.id, "custom")
      expect(yield* customTerms(moved.id)).toEqual([{ ...base, modulePriceArs: 550, includedModules: 0 }])

      const changed = yield* createAccount("growth")
      yield* accounts.setCustom(changed.id, { requestsPerMinute: 50 })
      expect(yield* customTerms(changed.id)).toEqual([
        { plateQueriesMonthly: null, moduleQueriesMonthly: 15_000, uniquePlatesDaily: 5_000, requestsPerMinute: 50,
          enabledModules: ["fines", "gnc"], modulePriceArs: 550, includedModules: 0 }
      ])
    }))

  it.effect("are kept when an account with terms of its own moves back to custom", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const account = yield* createAccount("growth")
      yield* accounts.setCustom(account.id, { modulePriceArs: 700, requestsPerMinute: 10 })
      yield* accounts.setPlan(account.id, "growth")
      yield* accounts.setPlan(account.id, "custom")
      expect(yield* customTerms(account.id)).toMatchObject([{ modulePriceArs: 700, requestsPerMinute: 10 }])
    }))
})
