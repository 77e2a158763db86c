/**
 * The database functions that look rows up by key keep one generic plan per session, made at
 * their first call. Made on a nearly empty table, PostgreSQL's cheapest plan reads the whole
 * table, or every row of an account, and the session would keep doing so as the table grows (a
 * poll batch read every operation, an admission every counter of the environment). So those
 * functions plan keyed lookups only (`KEYED_LOOKUP_PLANS`): here each is called first on a fresh
 * database, on one connection, and reads no table from end to end; then the tables grow (an
 * account's request windows of days, its distinct plates), and it still reads a few rows.
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
import { KEYED_LOOKUP_PLANS } from "../../src/platform/db/DatabaseFunctions.js"
import { sha256Hex } from "../../src/platform/ids/Ids.js"
import type { Principal } from "../../src/principal/Domain.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const AT = Date.parse("2026-03-02T10:15:00.000Z")

/**
 * What `call` did to each table, in a transaction of its own: the growth of a per-table count of
 * `pg_stat_xact_user_tables` (`count`, an SQL expression over its columns) across the call, for
 * the tables it grew. The counts are the session's not yet reported: this transaction's, maybe
 * earlier ones' too, hence the difference.
 */
const countedDuring = <A, E, R>(count: string, call: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => {
    const counts = sql.unsafe<{ readonly relname: string; readonly count: number }>(
      `select relname, (${count})::int as count from pg_stat_xact_user_tables`
    ).pipe(Effect.map((rows) => new Map(rows.map((row) => [row.relname, row.count]))))
    return sql.withTransaction(Effect.gen(function*() {
      const before = yield* counts
      yield* call
      const after = yield* counts
      return Object.fromEntries([...after].map(([table, n]) => [table, n - (before.get(table) ?? 0)] as const).filter(([, n]) => n > 0))
    }))
  })

/** The rows of each table `call` read: by a sequential scan or fetched through an index. */
const rowsReadBy = <A, E, R>(call: Effect.Effect<A, E, R>) => countedDuring("seq_tup_read + coalesce(idx_tup_fetch, 0)", call)

/** The tables `call` read from end to end. */
const tablesReadWholeBy = <A, E, R>(call: Effect.Effect<A, E, R>) =>
  Effect.map(countedDuring("seq_scan", call), (scans) => Object.keys(scans).sort())

const newAccount = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account = yield* accounts.create({ owner: "Lookups", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
  const { key } = yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })
  return { accountId: account.id, keyHash: sha256Hex(key) }
})

/**
 * Rows an account accumulates over days, for `accountIds`: a request window per minute of three
 * and a half days, and 5,000 distinct plates of an earlier day.
 */
const grow = (accountIds: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
    Effect.andThen(
      sql`insert into meter_counters (account_id, environment, meter, period_start, used)
        select a, 'production', 'requests', ${new Date(AT).toISOString()}::timestamptz - make_interval(mins => g), 1
        from generate_series(1, 5000) g, unnest(${accountIds}::text[]) a`,
      sql`insert into meter_distinct_values (account_id, environment, meter, period_start, value)
        select a, 'production', 'unique_plates', ${new Date(AT).toISOString()}::timestamptz - interval '1 day', 'P' || g
        from generate_series(1, 5000) g, unnest(${accountIds}::text[]) a`
    ))

const TIMEZONE = "America/Argentina/Buenos_Aires"

/** A growth-plan principal of `accountId`'s production key, as a charge takes it. */
const principalOf = (accountId: string): Principal => ({
  accountId, owner: "Lookups", keyId: "key_lookups", environment: "production", timezone: TIMEZONE, modulePricing: null,
  entitlements: {
    plan: "growth", plateQueriesMonthly: 100, moduleQueriesMonthly: 10, uniquePlatesDaily: 10, requestsPerMinute: 60,
    enabledModules: ["fines"], timezone: TIMEZONE
  }
})

/** Few rows of each table, whatever their size. */
const FEW = 20

describe("the database functions that run generic plans", () => {
  it("plan keyed lookups only: each says so where it is defined", () => {
    const generic = databaseFunctions.filter((fn) => /plan_cache_mode\s*=\s*force_generic_plan/.test(fn.source))
    expect(generic.map((fn) => fn.name)).toEqual(expect.arrayContaining(["vda_consume", "vda_admit_charge", "vda_operations_by_id"]))
    for (const fn of generic) expect({ name: fn.name, keyed: fn.source.includes(KEYED_LOOKUP_PLANS) }).toEqual({ name: fn.name, keyed: true })
  })
})

/** A fresh database on one connection: each function's plan is the one its first call made. */
const onOneConnection = () =>
  layer(Layer.mergeAll(Accounts.layer, Metering.layer).pipe(Layer.provideMerge(freshDatabaseLayer(1))), { excludeTestServices: true })

// each function's first call meets these nearly empty tables
onOneConnection()(
  "called first on a fresh database",
  (it) => {
    it.effect("admission's batch reads no table whole", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { keyHash } = yield* newAccount
        const batch = batchOf([{ keyHash, environment: "production", at: AT, prepared: undefined }], undefined)
        const admit = sql.unsafe(ADMIT_CHARGE, admitChargeParameters(keyHash, "production", undefined, batch))
        expect(yield* tablesReadWholeBy(admit)).toEqual([])
      }))

    it.effect("a charge (vda_consume) reads no table whole", () =>
      Effect.gen(function*() {
        const { accountId } = yield* newAccount
        const metering = yield* Metering
        const charge = metering.applyBatch([Charges.plateQuery(principalOf(accountId), "AB123CD", AT)])
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

// each function's first call meets nearly empty tables, which its plan is made for; then they grow
onOneConnection()(
  "called first on a fresh database, then once the tables have grown",
  (it) => {
    it.effect("admission, a charge and a status read each read a few rows", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const metering = yield* Metering
        const { accountId, keyHash } = yield* newAccount
        const admit = (at: number) =>
          sql.unsafe(ADMIT_CHARGE, admitChargeParameters(keyHash, "production", undefined, batchOf([{ keyHash, environment: "production", at, prepared: undefined }], undefined)))
        const charge = (plate: string, at: number) => metering.applyBatch([Charges.plateQuery(principalOf(accountId), plate, at)])
        const value = [accountId, "production", "2026-03-01T03:00:00.000Z", "2026-03-02T03:00:00.000Z", "2026-03-02T10:16:00.000Z"].join("/")
        const status = sql.unsafe(STATUS_READ, statusReadParameters([value]))
        yield* admit(AT)
        yield* charge("AB123CD", AT)
        yield* status

        const other = yield* newAccount
        yield* grow([accountId, other.accountId])
        const reads = {
          admission: yield* rowsReadBy(admit(AT + 60_000)),
          charge: yield* rowsReadBy(charge("AC456DE", AT + 60_000)),
          status: yield* rowsReadBy(status)
        }
        const many = Object.entries(reads).flatMap(([call, read]) =>
          Object.entries(read).filter(([, rows]) => rows >= FEW).map(([table, rows]) => `${call}: ${rows} rows of ${table}`))
        expect(many).toEqual([])
      }))
  }
)
