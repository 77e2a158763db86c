/**
 * An operation is created in one statement (`vda_create_operation`): an identical active operation
 * is reused and nothing is charged; a charge an allowance refuses creates nothing and charges
 * nothing; an insert that meets an identical active operation it was not told to look for fails the
 * whole statement, its charge undone. Otherwise the operation and its module rows are there, and
 * every counter of the consumption moved once.
 */
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import * as Charges from "../../src/metering/Charges.js"
import { type Consumption, Metering } from "../../src/metering/Metering.js"
import { type NewOperation, OperationsRepo, type ReuseKey } from "../../src/operations/Repo.js"
import type { Principal } from "../../src/principal/Domain.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const AT = Date.parse("2026-03-02T10:15:00.000Z")
const TIMEZONE = "America/Argentina/Buenos_Aires"

const Services = Layer.mergeAll(Accounts.layer, Metering.layer, OperationsRepo.layer).pipe(Layer.provideMerge(freshDatabaseLayer(2)))

/** A new account on a plan of `moduleQueriesMonthly` module queries, as its key shows it. */
const newPrincipal = (moduleQueriesMonthly: number) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ owner: "Creator", plan: "growth", timezone: TIMEZONE })
    return {
      accountId: account.id, owner: "Creator", keyId: "key_creator", environment: "sandbox", timezone: TIMEZONE, modulePricing: null,
      entitlements: {
        plan: "growth", plateQueriesMonthly: 100, moduleQueriesMonthly, uniquePlatesDaily: 100, requestsPerMinute: 60,
        enabledModules: ["fines", "vtv"], timezone: TIMEZONE
      }
    } satisfies Principal
  })

const keyOf = (principal: Principal, plate: string): ReuseKey => ({
  accountId: principal.accountId, environment: principal.environment, apiVersion: "v2", plate, modulesKey: "fines,vtv"
})

const rowOf = (key: ReuseKey, id: string): NewOperation => ({
  id, ...key, kind: "modules", input: { kind: "modules", modules: ["fines", "vtv"] }, createdAt: new Date(AT)
})

/** `row` created as the service creates it: the active twin's id, or the charge's decision. */
const create = (row: NewOperation, reuse: ReuseKey | null, consumption: Consumption) =>
  Effect.gen(function*() {
    const charge = (yield* Metering).chargedWithin([consumption])
    const created = yield* (yield* OperationsRepo).create(row, reuse, charge.arguments)
    if ("activeId" in created) return { activeId: created.activeId }
    const [decision] = yield* charge.decisions(created.charged)
    return { decision: decision! }
  })

/** A fines and vtv operation `id` for `key`, charged to `principal`, looking for its twin when `reuse` says so. */
const createModules = (principal: Principal, key: ReuseKey, id: string, reuse: "reuse" | "no reuse lock" = "reuse") =>
  create(rowOf(key, id), reuse === "reuse" ? key : null, Charges.moduleQueries(principal, ["fines", "vtv"], AT))

/** The account's counters of the month, by meter, and its operations with their module rows. */
const stateOf = (principal: Principal) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counters = yield* sql<{ readonly meter: string; readonly used: number }>`
      select meter, used from meter_counters where account_id = ${principal.accountId} order by meter`
    const operations = yield* sql<{ readonly id: string; readonly modules: number }>`
      select o.id, (select count(*)::int from operation_modules m where m.operation_id = o.id) as modules
      from operations o where o.account_id = ${principal.accountId} order by o.id`
    return { counters: Object.fromEntries(counters.map((c) => [c.meter, c.used])), operations }
  })

layer(Services, { excludeTestServices: true })("creating an operation in one statement", (it) => {
  it.effect("creates the operation with its module rows and charges each counter once", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal(10)
      const key = keyOf(principal, "AB100CD")
      const outcome = yield* createModules(principal, key, "op_create_1")
      expect("decision" in outcome && Result.isSuccess(outcome.decision)).toBe(true)
      const state = yield* stateOf(principal)
      expect(state.operations).toEqual([{ id: "op_create_1", modules: 2 }])
      expect(state.counters).toMatchObject({ module_queries: 2, "module:fines": 1, "module:vtv": 1 })
    }))

  it.effect("an identical active operation is reused: its id, nothing charged, nothing created", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal(10)
      const key = keyOf(principal, "AB200CD")
      yield* createModules(principal, key, "op_create_first")
      const before = yield* stateOf(principal)
      const second = yield* createModules(principal, key, "op_create_second")
      expect(second).toEqual({ activeId: "op_create_first" })
      expect(yield* stateOf(principal)).toEqual(before)
    }))

  it.effect("looks for the identical operation through its kind's unique index, not through the account's operations", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const principal = yield* newPrincipal(10)
      const key = keyOf(principal, "AB250CD")
      const indexScans = sql<{ readonly index: string; readonly scans: number }>`
        select c.relname as index, pg_stat_get_xact_numscans(c.oid)::int as scans
        from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'operations'::regclass`.pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.index, row.scans])))
        )
      const scanned = yield* sql.withTransaction(Effect.gen(function*() {
        const before = yield* indexScans
        yield* createModules(principal, key, "op_create_indexed")
        const after = yield* indexScans
        return [...after].filter(([index, scans]) => scans > (before.get(index) ?? 0)).map(([index]) => index).sort()
      }))
      expect(scanned).toContain("operations_active_reuse")
      expect(scanned).not.toContain("operations_recent")
    }))

  it.effect("a charge the allowance refuses creates nothing and charges nothing", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal(1)
      const key = keyOf(principal, "AB300CD")
      const outcome = yield* createModules(principal, key, "op_create_refused")
      expect("decision" in outcome && Result.isFailure(outcome.decision) && outcome.decision.failure).toMatchObject({
        _tag: "LimitReached", meter: "module_queries", limit: 1, used: 0
      })
      const state = yield* stateOf(principal)
      expect(state.operations).toEqual([])
      expect(Object.values(state.counters).every((used) => used === 0)).toBe(true)
    }))

  it.effect("an insert that meets an identical active operation fails the statement, its charge undone", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal(10)
      const key = keyOf(principal, "AB400CD")
      yield* createModules(principal, key, "op_create_active")
      const before = yield* stateOf(principal)
      // not told to look for it (no reuse lock): the unique index on active operations stops it
      const exit = yield* Effect.exit(createModules(principal, key, "op_create_twin", "no reuse lock"))
      // a defect (the unique violation, never a client's error), and nothing of it stays
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(yield* stateOf(principal)).toEqual(before)
    }))
})
