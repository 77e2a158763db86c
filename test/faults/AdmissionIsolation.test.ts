/**
 * One account saturating admission, on the server process: forty of its requests wait in
 * admission (its request counters are held by another transaction, as under heavy contention on
 * its rows), and meanwhile another account's requests are admitted at their usual speed. With
 * one shared admission queue, or a connection held per waiting request, the second account would
 * wait behind the first.
 *
 * The second account's latency is judged against its own, measured alone just before in the same
 * test on the same machine, not against a fixed number: how fast a request is on a shared 2-core
 * runner is not this test's business (the bench measures that), only that the busy account does
 * not slow the other one down.
 */
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiOf } from "../support/ApiClient.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer } from "../support/Processes.js"

let databaseUrl: string
let server: ServerProcess
let blocker: Pg.Client
const accounts: Record<"busy" | "other", { id: string; key: string }> = {} as any

beforeAll(async () => {
  databaseUrl = await freshDatabase()
  // the busy account's requests wait for its counters rather than give up after the usual 2 s
  const env = { DATABASE_URL: databaseUrl, DB_LOCK_TIMEOUT_MS: "30000", DB_STATEMENT_TIMEOUT_MS: "30000" }
  for (const name of ["busy", "other"] as const) {
    const account = await cliAccount(env, { owner: name, plan: "custom", custom: ["--rpm", "unlimited"], environments: ["sandbox"] })
    accounts[name] = { id: account.id, key: account.keys.sandbox }
  }
  server = await startServer(env)
  blocker = new Pg.Client({ connectionString: databaseUrl })
  await blocker.connect()
}, 60_000)

afterAll(async () => {
  await blocker?.end()
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
})

const usage = (key: string) => apiOf(server.sandboxUrl, key).answer((c) => c.metering.getUsage())

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

describe("admission under one account's saturation", () => {
  it("another account's p99 stays near its own baseline while forty of the busy account's requests wait", async () => {
    const other: Array<number> = []
    const measure = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const started = performance.now()
        const res = await usage(accounts.other.key)
        expect(res.status).toBe(200)
        other.push(performance.now() - started)
      }
    }
    await measure(20) // warm: connections, caches
    other.splice(0)
    // the baseline: the quiet account alone, as many requests as under saturation (the same p99 rank)
    await measure(200)
    const baseline = percentile(other.splice(0), 99)

    // hold the busy account's request counters: this minute's and the next two
    await blocker.query("begin")
    await blocker.query(
      `insert into meter_counters (account_id, environment, meter, period_start, used)
       select $1, 'sandbox', 'requests', date_trunc('minute', now()) + make_interval(mins => m), 0 from generate_series(0, 2) m
       on conflict (account_id, environment, meter, period_start) do update set used = meter_counters.used`,
      [accounts.busy.id]
    )
    let settled = 0
    const busy = Array.from({ length: 40 }, () => usage(accounts.busy.key).then((res) => (settled++, res.status)))

    await measure(200)
    const p99 = percentile(other, 99)
    expect(settled).toBe(0) // the busy account was saturated the whole time
    await blocker.query("rollback")
    expect(await Promise.all(busy)).toEqual(Array(40).fill(200))

    // The bound: within 4x its baseline, or baseline + 200 ms when 4x is less. A p99 of 200
    // requests is their third slowest: on a shared 2-core machine (other test files start
    // processes beside this one) a spell of a few hundred ms without CPU during the loaded half,
    // and none during the baseline, sets it, and 4x of a baseline of a few tens of ms alone
    // would fail on that.
    // What the bound is there to catch is an order of magnitude beyond it: a request queued
    // behind the busy account's, or waiting for a connection their forty waiting requests hold,
    // waits until their counters are released, which is after the measurement (seconds, or the
    // test's timeout).
    const bound = Math.max(4 * baseline, baseline + 200)
    console.log(`other account: p99 ${p99.toFixed(1)} ms under saturation, baseline ${baseline.toFixed(1)} ms alone (bound ${bound.toFixed(1)} ms)`)
    expect(p99).toBeLessThanOrEqual(bound)
  }, 90_000)
})
