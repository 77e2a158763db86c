/**
 * Retention: per-minute request windows older than a day, past days' unique-plate sets and
 * settled deliveries older than the retention, and console links and sessions a day past their use
 * are removed; what is still needed (and the console's audit) is kept.
 */
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Accounts } from "../../src/accounts/Accounts.js"
import { pruneConsole } from "../../src/console/Retention.js"
import { pruneMetering } from "../../src/metering/Retention.js"
import { pruneDeliveries } from "../../src/webhooks/Retention.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"

const Services = Accounts.layer.pipe(Layer.provideMerge(freshDatabaseLayer(2)), Layer.provideMerge(testConfig()))

/** The configuration with another delivery retention, for this effect alone. */
const withRetentionDays = (days: number) =>
  Effect.provide(testConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: String(days) }), { local: true })

const query = (text: string, params: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(text, params))

const count = (text: string, params: ReadonlyArray<unknown>) => Effect.map(query(text, params), (rows) => Number(rows[0]!.n))

/** One column of the rows, by its field name (the client gives snake_case columns in camelCase). */
const column = (text: string, params: ReadonlyArray<unknown>, name: string) =>
  Effect.map(query(text, params), (rows) => rows.map((row) => row[name]))

const newAccountId = Effect.flatMap(Accounts, (accounts) =>
  accounts.create({ owner: "Test owner", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })).pipe(
    Effect.map((account) => account.id)
  )

layer(Services, { excludeTestServices: true })("retention", (it) => {
  it.effect("metering: old request windows and past days' plate sets go; recent windows and monthly counters stay", () =>
    Effect.gen(function*() {
      const id = yield* newAccountId
      const insertCounter = (meter: string, at: string) =>
        query("insert into meter_counters values ($1, 'production', $2, $3, 1)", [id, meter, at])
      yield* insertCounter("requests", "2026-01-01T10:00:00Z")
      yield* query("insert into meter_counters values ($1, 'production', 'requests', now() - interval '5 minutes', 1)", [id])
      yield* insertCounter("plate_queries", "2026-01-01T03:00:00Z")
      yield* query("insert into meter_distinct_values values ($1, 'production', 'unique_plates', '2026-01-01T03:00:00Z', 'AB123CD')", [id])
      yield* query("insert into meter_distinct_values values ($1, 'production', 'unique_plates', now(), 'AB124CD')", [id])

      expect(yield* pruneMetering).toBe(2)
      expect(yield* count("select count(*) as n from meter_counters where account_id = $1 and meter = 'requests'", [id])).toBe(1)
      expect(yield* count("select count(*) as n from meter_counters where account_id = $1 and meter = 'plate_queries'", [id])).toBe(1)
      expect(yield* count("select count(*) as n from meter_distinct_values where account_id = $1", [id])).toBe(1)
    }))

  it.effect("deliveries: settled ones past the retention go; recent and pending ones stay", () =>
    Effect.gen(function*() {
      const id = yield* newAccountId
      const insert = (status: string, updatedAgo: string) =>
        query(
          `insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, next_attempt_at, created_at, updated_at)
           values (gen_random_uuid(), $1, 'production', 'v2', 'webhook.test', '{}', $2, now() + interval '1 day', now() - $3::interval, now() - $3::interval)`,
          [id, status, updatedAgo]
        )
      yield* insert("processed", "10 days")
      yield* insert("failed", "8 days")
      yield* insert("processed", "1 day")
      yield* insert("pending", "30 days")
      expect(yield* pruneDeliveries.pipe(withRetentionDays(7))).toBe(2)
      const left = yield* column("select status from webhook_deliveries where account_id = $1 order by status", [id], "status")
      expect(left).toEqual(["pending", "processed"])
    }))

  it.effect("console: links and sessions a day past their end go; live ones and the audit stay", () =>
    Effect.gen(function*() {
      const id = yield* newAccountId
      const link = (hash: string, expiresAgo: string) =>
        query(
          `insert into console_links values ($1, $2, 'production', 'x', now() - interval '2 days', now() - $3::interval, null)`,
          [hash, id, expiresAgo]
        )
      yield* link(`old-${id}`, "2 days")
      yield* link(`recent-${id}`, "1 hour")
      const session = (hash: string, endedAgo: string | null, expiresIn: string) =>
        query(
          `insert into console_sessions values ($1, $1, $2, 'production', 'x', 'csrf', now() - interval '3 days', now(), now() + $4::interval,
             now() - $3::interval)`,
          [hash, id, endedAgo, expiresIn]
        )
      yield* session(`ended-${id}`, "2 days", "1 hour")
      yield* session(`expired-${id}`, null, "-2 days")
      yield* session(`live-${id}`, null, "1 hour")
      yield* session(`just-ended-${id}`, "1 hour", "1 hour")
      yield* query("insert into console_audit (account_id, environment, actor, action, at) values ($1, 'production', 'x', 'key.create', now() - interval '400 days')", [id])

      expect(yield* pruneConsole).toBe(3)
      expect(yield* column("select token_hash from console_links where account_id = $1", [id], "tokenHash")).toEqual([`recent-${id}`])
      const sessions = yield* column("select id_hash from console_sessions where account_id = $1 order by id_hash", [id], "idHash")
      expect(sessions).toEqual([`just-ended-${id}`, `live-${id}`])
      expect(yield* count("select count(*) as n from console_audit where account_id = $1", [id])).toBe(1)
    }))

  it.effect("the cut-off is the application's clock, which stamped the rows, not the database's now()", () =>
    Effect.gen(function*() {
      const id = yield* newAccountId
      // rows that are old by the database's clock but recent by an application clock running 3 days behind it
      yield* query("insert into meter_counters values ($1, 'production', 'requests', now() - interval '2 days', 1)", [id])
      yield* query("insert into meter_distinct_values values ($1, 'production', 'unique_plates', now() - interval '3 days', 'AB125CD')", [id])
      yield* query(
        `insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, next_attempt_at, created_at, updated_at)
         values (gen_random_uuid(), $1, 'production', 'v2', 'webhook.test', '{}', 'processed', now(), now() - interval '9 days', now() - interval '9 days')`,
        [id]
      )
      yield* query(`insert into console_links values ($1, $2, 'production', 'x', now() - interval '3 days', now() - interval '2 days', null)`, [`behind-${id}`, id])
      const prune = Effect.all([pruneMetering, pruneDeliveries.pipe(withRetentionDays(7)), pruneConsole])
      const threeDaysAgo = (yield* Clock.currentTimeMillis) - 3 * 86_400_000
      const behind = Effect.andThen(TestClock.setTime(threeDaysAgo), prune).pipe(Effect.provide(TestClock.layer()))
      expect(yield* behind).toEqual([0, 0, 0])
      // the same rows by the live clock
      expect(yield* prune).toEqual([2, 1, 1])
    }))
})
