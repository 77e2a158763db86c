import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Metering } from "../src/metering/Metering.js"
import { dayOf, minuteOf, monthOf } from "../src/metering/Periods.js"
import { pgClientLayer } from "../src/platform/Database.js"

const main = async () => {
  const runtime = ManagedRuntime.make(Metering.Default.pipe(Layer.provideMerge(pgClientLayer(Redacted.make(process.env.DB!), 10))))
  const account = process.env.ACCT!
  const now = Date.now()
  const items = Array.from({ length: 10 }, () => ({
    accountId: account, environment: "production" as const,
    charges: [
      { meter: "plate_queries", amount: 1, limit: null, period: monthOf(now, "America/Argentina/Buenos_Aires") },
      { meter: "unique_plates", amount: 1, limit: null, period: dayOf(now, "America/Argentina/Buenos_Aires"), distinctValue: "AE725VQ" },
      { meter: "v2:plate_queries", amount: 1, period: monthOf(now, "America/Argentina/Buenos_Aires") }
    ]
  }))
  const rpm = Array.from({ length: 10 }, () => ({ accountId: account, environment: "production" as const, charges: [{ meter: "requests", amount: 1, limit: null, period: minuteOf(now) }] }))
  const time = async (name: string, eff: Effect.Effect<unknown, unknown, any>, n: number) => {
    await runtime.runPromise(eff as any)
    const c0 = process.cpuUsage(); const t0 = performance.now()
    for (let i = 0; i < n; i++) await runtime.runPromise(eff as any)
    const c = process.cpuUsage(c0)
    console.log(name.padEnd(28), `${((c.user + c.system) / n).toFixed(0)}µs cpu`, `${((performance.now() - t0) / n * 1000).toFixed(0)}µs wall`)
  }
  await time("Effect.void", Effect.void, 2000)
  const { default: pg } = await import("pg")
  const pool = new pg.Pool({ connectionString: process.env.DB!, max: 2 })
  await pool.query("select 1")
  { const c0 = process.cpuUsage(); for (let i = 0; i < 500; i++) await pool.query("select 1"); const c = process.cpuUsage(c0); console.log("raw pg select 1".padEnd(28), `${((c.user + c.system) / 500).toFixed(0)}µs cpu`) }
  { const c0 = process.cpuUsage(); for (let i = 0; i < 500; i++) await pool.query("select $1::int", [i]); const c = process.cpuUsage(c0); console.log("raw pg select $1".padEnd(28), `${((c.user + c.system) / 500).toFixed(0)}µs cpu`) }
  await pool.end()
  await time("select 1", Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select 1`), 500)
  await time("select 1 (withoutTransforms)", Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withoutTransforms()`select 1`), 500)
  await time("begin/commit", Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.void)), 500)
  await time("applyBatch plate x10", Effect.flatMap(Metering, (m) => m.applyBatch(items)), 300)
  await time("applyBatch rpm x10", Effect.flatMap(Metering, (m) => m.applyBatch(rpm)), 300)
  await runtime.dispose()
}
main()
