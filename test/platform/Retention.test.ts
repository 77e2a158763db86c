/**
 * Retention: per-minute request windows older than a day, past days' unique-plate sets and
 * settled deliveries older than the retention, and console links and sessions a day past their use
 * are removed; what is still needed (and the console's audit) is kept.
 */
import { Clock, Effect } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pruneConsole } from "../../src/console/Retention.js"
import { pruneMetering } from "../../src/metering/Retention.js"
import { pruneDeliveries } from "../../src/webhooks/Retention.js"
import { ManualClock } from "../support/ManualClock.js"
import { freshDatabase } from "../support/Postgres.js"
import { makeTestApp, type TestApp, testConfig } from "../support/TestApp.js"

let app: TestApp
let db: Pg.Client

beforeAll(async () => {
  const databaseUrl = await freshDatabase()
  db = new Pg.Client({ connectionString: databaseUrl })
  await db.connect()
  // the app's own retention passes (one at start, then hourly) would race the prunes the tests
  // run: their leases are held elsewhere, so only the tests prune
  for (const job of ["metering", "webhook-deliveries", "console"]) {
    await db.query("insert into leases (name, holder, expires_at) values ($1, 'retention-test', now() + interval '1 day')", [`retention-${job}`])
  }
  app = await makeTestApp({ databaseUrl })
})
afterAll(async () => {
  await db?.end()
  await app?.dispose()
})

/**
 * The configuration with another delivery retention. Local: the app's runtime has built its own
 * configuration already, and layers are shared across `provide`s otherwise.
 */
const withRetentionDays = (days: number) =>
  Effect.provide(testConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: String(days) }), { local: true })

const count = async (query: string, params: Array<unknown>) => Number((await db.query(query, params)).rows[0].n)

describe("retention", () => {
  it("metering: old request windows and past days' plate sets go; recent windows and monthly counters stay", async () => {
    const { id } = await app.createAccount()
    const insertCounter = (meter: string, at: string) =>
      db.query("insert into meter_counters values ($1, 'production', $2, $3, 1)", [id, meter, at])
    await insertCounter("requests", "2026-01-01T10:00:00Z")
    await db.query("insert into meter_counters values ($1, 'production', 'requests', now() - interval '5 minutes', 1)", [id])
    await insertCounter("plate_queries", "2026-01-01T03:00:00Z")
    await db.query("insert into meter_distinct_values values ($1, 'production', 'unique_plates', '2026-01-01T03:00:00Z', 'AB123CD')", [id])
    await db.query("insert into meter_distinct_values values ($1, 'production', 'unique_plates', now(), 'AB124CD')", [id])

    expect(await app.run(pruneMetering)).toBe(2)
    expect(await count("select count(*) as n from meter_counters where account_id = $1 and meter = 'requests'", [id])).toBe(1)
    expect(await count("select count(*) as n from meter_counters where account_id = $1 and meter = 'plate_queries'", [id])).toBe(1)
    expect(await count("select count(*) as n from meter_distinct_values where account_id = $1", [id])).toBe(1)
  })

  it("deliveries: settled ones past the retention go; recent and pending ones stay", async () => {
    const { id } = await app.createAccount()
    // (their next attempt a day off: the engine's sweeps, which take up pending deliveries, leave them be)
    const insert = (status: string, updatedAgo: string) =>
      db.query(
        `insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, next_attempt_at, created_at, updated_at)
         values (gen_random_uuid(), $1, 'production', 'v2', 'webhook.test', '{}', $2, now() + interval '1 day', now() - $3::interval, now() - $3::interval)`,
        [id, status, updatedAgo]
      )
    await insert("processed", "10 days")
    await insert("failed", "8 days")
    await insert("processed", "1 day")
    await insert("pending", "30 days")
    expect(await app.run(pruneDeliveries.pipe(withRetentionDays(7)))).toBe(2)
    const left = (await db.query("select status from webhook_deliveries where account_id = $1 order by status", [id])).rows.map((r) => r.status)
    expect(left).toEqual(["pending", "processed"])
  })

  it("console: links and sessions a day past their end go; live ones and the audit stay", async () => {
    const { id } = await app.createAccount()
    const link = (hash: string, expiresAgo: string) =>
      db.query(
        `insert into console_links values ($1, $2, 'production', 'x', now() - interval '2 days', now() - $3::interval, null)`,
        [hash, id, expiresAgo]
      )
    await link(`old-${id}`, "2 days")
    await link(`recent-${id}`, "1 hour")
    const session = (hash: string, endedAgo: string | null, expiresIn: string) =>
      db.query(
        `insert into console_sessions values ($1, $1, $2, 'production', 'x', 'csrf', now() - interval '3 days', now(), now() + $4::interval,
           now() - $3::interval)`,
        [hash, id, endedAgo, expiresIn]
      )
    await session(`ended-${id}`, "2 days", "1 hour")
    await session(`expired-${id}`, null, "-2 days")
    await session(`live-${id}`, null, "1 hour")
    await session(`just-ended-${id}`, "1 hour", "1 hour")
    await db.query("insert into console_audit (account_id, environment, actor, action, at) values ($1, 'production', 'x', 'key.create', now() - interval '400 days')", [id])

    expect(await app.run(pruneConsole)).toBe(3)
    expect((await db.query("select token_hash from console_links where account_id = $1", [id])).rows.map((r) => r.token_hash)).toEqual([`recent-${id}`])
    const sessions = (await db.query("select id_hash from console_sessions where account_id = $1 order by id_hash", [id])).rows.map((r) => r.id_hash)
    expect(sessions).toEqual([`just-ended-${id}`, `live-${id}`])
    expect(await count("select count(*) as n from console_audit where account_id = $1", [id])).toBe(1)
  })

  it("the cut-off is the application's clock, which stamped the rows, not the database's now()", async () => {
    const { id } = await app.createAccount()
    // rows that are old by the database's clock but recent by an application clock running 3 days behind it
    await db.query("insert into meter_counters values ($1, 'production', 'requests', now() - interval '2 days', 1)", [id])
    await db.query("insert into meter_distinct_values values ($1, 'production', 'unique_plates', now() - interval '3 days', 'AB125CD')", [id])
    await db.query(
      `insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, next_attempt_at, created_at, updated_at)
       values (gen_random_uuid(), $1, 'production', 'v2', 'webhook.test', '{}', 'processed', now(), now() - interval '9 days', now() - interval '9 days')`,
      [id]
    )
    await db.query(`insert into console_links values ($1, $2, 'production', 'x', now() - interval '3 days', now() - interval '2 days', null)`, [`behind-${id}`, id])
    const behind = new ManualClock(Date.now() - 3 * 86_400_000)
    const prune = Effect.all([pruneMetering, pruneDeliveries.pipe(withRetentionDays(7)), pruneConsole])
    expect(await app.run(prune.pipe(Effect.provideService(Clock.Clock, behind)))).toEqual([0, 0, 0])
    // the same rows by the live clock
    expect(await app.run(prune)).toEqual([2, 1, 1])
  })
})
