/**
 * What metering no longer needs: per-minute request windows older than a day (they only ever
 * decide the current minute) and unique-plate sets of past days (the day's count stays in its
 * counter). Monthly counters and billing periods are kept.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { METER } from "../platform/contract/MeterNames.js"
import { cutoff, retentionJob } from "../platform/db/Retention.js"

export const pruneMetering = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const windows = yield* sql`
    delete from meter_counters where meter = ${METER.requests} and period_start < ${yield* cutoff("1 day")} returning 1`
  const values = yield* sql`
    delete from meter_distinct_values where period_start < ${yield* cutoff("2 days")} returning 1`
  return windows.length + values.length
})

export const MeteringRetentionLive = retentionJob("metering", pruneMetering)
