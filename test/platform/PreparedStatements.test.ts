/**
 * The hot statement of every request, admission's batch (`vda_admit_charge`, 18 typed parameters,
 * arrays among them), run through the SQL client as the admission runs it. The driver prepares and
 * caches every statement: run many times on one connection it is parsed there once, keeps giving
 * the same rows, and its per-minute counts move exactly; a failure is the client's `SqlError`, and
 * the connection serves the next statement.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ADMIT_CHARGE, admitChargeParameters, batchOf, type BatchAnswer } from "../../src/metering/Admission.js"
import { sha256Hex } from "../../src/platform/ids/Ids.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const PREPARED = "select statement from pg_prepared_statements"

/** A key of a new account, as admission knows it: its hash. */
const newKeyHash = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account = yield* accounts.create({ owner: "Prepared", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
  const { key } = yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })
  return sha256Hex(key)
})

/** One run of the batch statement, as the admission makes it. */
const admitCharge = (keyHash: string, at: ReadonlyArray<number>) =>
  Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
    sql.unsafe<{ readonly answer: BatchAnswer | null }>(
      ADMIT_CHARGE,
      admitChargeParameters(keyHash, "production", undefined, batchOf(at.map((instant) => ({ keyHash, environment: "production", at: instant, prepared: undefined })), undefined))
    ))

// one connection: every statement runs on the session that prepared it; the services' real clocks
layer(Accounts.layer.pipe(Layer.provideMerge(freshDatabaseLayer(1))), { excludeTestServices: true })("the batch statement", (it) => {
  it.effect("run many times on one connection: parsed there once, the same rows each time", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const keyHash = yield* newKeyHash
      // an empty batch: the key's account and nothing counted, so every run answers alike
      const first = yield* admitCharge(keyHash, [])
      expect(first).toHaveLength(1)
      expect(first[0]!.answer).toMatchObject({ key_environment: "production", charged: false })
      for (let run = 0; run < 25; run++) expect(yield* admitCharge(keyHash, [])).toEqual(first)
      // the session holds the statement's text once: 26 runs, one preparation
      const prepared = yield* sql.unsafe<{ readonly statement: string }>(PREPARED)
      expect(prepared.filter((row) => row.statement === ADMIT_CHARGE)).toHaveLength(1)
    }))

  it.effect("its per-minute count moves by each run's requests, exactly", () =>
    Effect.gen(function*() {
      const keyHash = yield* newKeyHash
      const minute = Date.parse("2026-03-02T10:15:00.000Z")
      for (let run = 0; run < 5; run++) {
        const [row] = yield* admitCharge(keyHash, [minute + 1_000, minute + 2_000])
        // the whole batch fits: the window's count before it, two more each run
        expect(row!.answer!.window_used).toEqual([2 * run])
      }
    }))

  it.effect("a failing statement fails with SqlError, and the connection serves the next one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const failed = yield* Effect.flip(sql.unsafe("select 1 / $1::integer as ratio", [0]))
      expect(SqlError.isSqlError(failed)).toBe(true)
      expect(yield* sql.unsafe("select 1 / $1::integer as ratio", [1])).toEqual([{ ratio: 1 }])
    }))
})
