/**
 * The delivery backlog's age gauge counts by the application's clock, which stamped the
 * deliveries: on a clock days behind the machine's, a delivery pending 90 s reads 90 s.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ManualClock } from "../support/ManualClock.js"
import { makeTestApp, type TestApp } from "../support/TestApp.js"

const clock = new ManualClock(Date.now() - 3 * 86_400_000)
let app: TestApp

beforeAll(async () => {
  app = await makeTestApp({ clock })
})
afterAll(() => app?.dispose())

const gauge = (text: string, name: string) => {
  const line = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, "m").exec(text)
  return line === null ? undefined : Number(line[1])
}

describe("the webhook backlog gauges", () => {
  it("count the oldest pending delivery's age by the application's clock", async () => {
    const { metrics } = await app.listen()
    const { id } = await app.createAccount()
    const created = new Date(clock.currentTimeMillisUnsafe() - 90_000)
    // its next attempt an hour away: no sender takes it while the test reads the gauges
    const next = new Date(clock.currentTimeMillisUnsafe() + 3_600_000)
    await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, next_attempt_at, created_at, updated_at)
        values (gen_random_uuid(), ${id}, 'production', 'v2', 'webhook.test', '{}', 'pending', ${next}, ${created}, ${created})`
    }))
    const scraped = await (await fetch(metrics)).text()
    expect(gauge(scraped, "vda_webhook_deliveries_pending")).toBe(1)
    expect(gauge(scraped, "vda_webhook_oldest_pending_delivery_age_seconds")).toBe(90)
  })
})
