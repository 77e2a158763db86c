/**
 * `legacyOpeningBalance` (DESIGN §11): plate queries an account had already used this month in
 * the old system. Setting it puts the balance in this month's plate-query counter (so it counts
 * toward the monthly limit) and records it beside, for usage to show. Setting it again replaces
 * it: the counter moves by the difference.
 */
import { Clock, Context, Effect, Layer, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { METER } from "../platform/contract/MeterNames.js"
import type { Environment } from "../platform/http/RequestContext.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { LEGACY_OPENING_PLATE_QUERIES } from "./Meters.js"
import { monthOf, type Period } from "./Periods.js"
import { CounterRow } from "./UsageReader.js"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const counters = SqlRows.findAll("plate query counters, locked", CounterRow.mapFields(Struct.pick(["meter", "used"])))

  const upsert = (accountId: string, environment: Environment, meter: string, month: Period, used: number) =>
    sql`
      insert into meter_counters (account_id, environment, meter, period_start, used)
      values (${accountId}, ${environment}, ${meter}, ${month.start}, ${used})
      on conflict (account_id, environment, meter, period_start) do update set used = ${used}`

  /** Sets this month's opening balance; returns the month it applies to. */
  const set = Effect.fnUntraced(function*(input: { accountId: string; environment: Environment; timezone: string; plateQueries: number }) {
    const month = monthOf(yield* Clock.currentTimeMillis, input.timezone)
    const rows = yield* counters(sql`
      select meter, used from meter_counters
      where account_id = ${input.accountId} and environment = ${input.environment} and period_start = ${month.start}
        and meter in (${METER.plate_queries}, ${LEGACY_OPENING_PLATE_QUERIES})
      for update`)
    const used = (meter: string) => rows.find((r) => r.meter === meter)?.used ?? 0
    const previous = used(LEGACY_OPENING_PLATE_QUERIES)
    yield* upsert(input.accountId, input.environment, LEGACY_OPENING_PLATE_QUERIES, month, input.plateQueries)
    yield* upsert(input.accountId, input.environment, METER.plate_queries, month,
      Math.max(0, used(METER.plate_queries) + input.plateQueries - previous))
    return month
  }, sql.withTransaction, Effect.orDie)

  return { set }
})

export class OpeningBalance extends Context.Service<OpeningBalance, Effect.Success<typeof make>>()("vda/OpeningBalance", { make }) {
  static readonly layer = Layer.effect(OpeningBalance, make)
}
