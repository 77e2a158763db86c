/**
 * The database functions that look rows up by key keep one generic plan per session, made at
 * their first call. Made on a nearly empty table, PostgreSQL's cheapest plan reads the whole
 * table, and the session would keep reading it whole as it grows (a poll batch read every
 * operation, a status read every account's counters). So those functions plan without sequential
 * scans (`enable_seqscan = off`): here each is called first on a fresh database, on one
 * connection, and the transaction that called it read no table from end to end.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { STATUS_READ, statusReadParameters } from "../../src/accounts/Status.js"
import { databaseFunctions } from "../../src/DatabaseLive.js"
import { ADMIT_CHARGE, admitChargeParameters, batchOf } from "../../src/metering/Admission.js"
import * as Charges from "../../src/metering/Charges.js"
import { Metering } from "../../src/metering/Metering.js"
import { sha256Hex } from "../../src/platform/ids/Ids.js"
import type { Principal } from "../../src/principal/Domain.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const AT = Date.parse("2026-03-02T10:15:00.000Z")

/**
 * The session's sequential scans per table, not yet reported (they include this transaction's, and
 * may include earlier ones'): compared before and after a call.
 */
const sequentialScans = Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
  sql<{ readonly relname: string; readonly scans: number }>`select relname, seq_scan::int as scans from pg_stat_xact_user_tables`.pipe(
    Effect.map((rows) => new Map(rows.map((row) => [row.relname, row.scans])))
  ))

/** The tables `call` read from end to end, in a transaction of its own. */
const tablesReadWholeBy = <A, E, R>(call: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const before = yield* sequentialScans
      yield* call
      const after = yield* sequentialScans
      return [...after].filter(([table, scans]) => scans > (before.get(table) ?? 0)).map(([table]) => table).sort()
    })))

const newAccount = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account = yield* accounts.create({ owner: "Lookups", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
  const { key } = yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })
  return { accountId: account.id, keyHash: sha256Hex(key) }
})

describe("the database functions that run generic plans", () => {
  it("plan without sequential scans: each says so where it is defined", () => {
    const generic = databaseFunctions.filter((fn) => /plan_cache_mode\s*=\s*force_generic_plan/.test(fn.source))
    expect(generic.map((fn) => fn.name)).toEqual(expect.arrayContaining(["vda_consume", "vda_admit_charge", "vda_operations_by_id"]))
    for (const fn of generic) expect({ name: fn.name, seqscan: /set enable_seqscan\s*=\s*off/.test(fn.source) }).toEqual({ name: fn.name, seqscan: true })
  })
})

// one connection: each function's plan is the one its first call made, on these nearly empty tables
layer(Layer.mergeAll(Accounts.layer, Metering.layer).pipe(Layer.provideMerge(freshDatabaseLayer(1))), { excludeTestServices: true })(
  "called first on a fresh database",
  (it) => {
    it.effect("admission's batch reads no table whole", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { keyHash } = yield* newAccount
        const batch = batchOf([{ keyHash, environment: "production", at: AT }], undefined)
        const admit = sql.unsafe(ADMIT_CHARGE, admitChargeParameters(keyHash, "production", undefined, batch))
        expect(yield* tablesReadWholeBy(admit)).toEqual([])
      }))

    it.effect("a charge (vda_consume) reads no table whole", () =>
      Effect.gen(function*() {
        const { accountId } = yield* newAccount
        const metering = yield* Metering
        const timezone = "America/Argentina/Buenos_Aires"
        const principal: Principal = {
          accountId, owner: "Lookups", keyId: "key_lookups", environment: "production", timezone, modulePricing: null,
          entitlements: {
            plan: "growth", plateQueriesMonthly: 100, moduleQueriesMonthly: 10, uniquePlatesDaily: 10, requestsPerMinute: 60,
            enabledModules: ["fines"], timezone
          }
        }
        const charge = metering.applyBatch([Charges.plateQuery(principal, "AB123CD", AT)])
        expect(yield* tablesReadWholeBy(charge)).toEqual([])
      }))

    it.effect("a status read reads no table whole", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { accountId } = yield* newAccount
        const value = [accountId, "production", "2026-03-01T03:00:00.000Z", "2026-03-02T03:00:00.000Z", "2026-03-02T10:15:00.000Z"].join("/")
        expect(yield* tablesReadWholeBy(sql.unsafe(STATUS_READ, statusReadParameters([value])))).toEqual([])
      }))

    it.effect("a poll's read and a reuse read of operations read no table whole", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { accountId } = yield* newAccount
        expect(yield* tablesReadWholeBy(sql`select * from vda_operations_by_id(${["op_unknown"]}::text[])`)).toEqual([])
        const reuse = sql`select * from vda_active_modules_operations(
          ${[accountId]}::text[], ${["production"]}::text[], ${["v2"]}::text[], ${["AB123CD"]}::text[], ${["fines"]}::text[])`
        expect(yield* tablesReadWholeBy(reuse)).toEqual([])
      }))
  }
)
