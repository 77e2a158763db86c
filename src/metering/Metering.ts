/**
 * The consumption primitive: charge units to an account's meters atomically, never past a limit.
 *
 * Every consumption of one account and environment goes through a per-account batch: concurrent
 * consumptions are applied in arrival order inside one transaction that holds the meters' row
 * locks, so limits are exact across requests and processes while a busy account pays one commit
 * per batch instead of one per request.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Either } from "effect"
import * as Batcher from "../platform/Batcher.js"
import type { MeterName } from "../platform/Errors.js"
import type { Environment } from "../platform/RequestContext.js"
import type { Period } from "./Periods.js"

export interface Charge {
  /** Counter name: a meter with an allowance, or a plain counter (per version, per module). */
  readonly meter: string
  readonly amount: number
  readonly period: Period
  /** The allowance for this meter; null is unlimited. Absent for plain counters. */
  readonly limit?: number | null
  /** When set, the charge applies only the first time this value is seen in the period. */
  readonly distinctValue?: string
}

export interface Consumption {
  readonly accountId: string
  readonly environment: Environment
  readonly charges: ReadonlyArray<Charge>
  /** Custom plans: the module price and included units to freeze if this opens a billing period. */
  readonly modulePricing?: { readonly period: Period; readonly unitPriceCents: number; readonly included: number }
}

export interface ChargeResult {
  readonly meter: string
  /** Units actually charged (0 for a distinct value already seen). */
  readonly charged: number
  /** The counter after this consumption. */
  readonly used: number
  readonly limit: number | null | undefined
  readonly period: Period
}

export class LimitReached extends Data.TaggedError("LimitReached")<{
  readonly meter: MeterName
  readonly limit: number
  readonly used: number
  readonly resetAt: Date
}> {}

const slotKey = (meter: string, periodStart: Date) => `${meter}\u0000${periodStart.toISOString()}`
const distinctKey = (meter: string, periodStart: Date, value: string) => `${slotKey(meter, periodStart)}\u0000${value}`

interface CounterRow {
  readonly meter: string
  readonly periodStart: Date
  readonly used: number
}

interface DistinctRow {
  readonly meter: string
  readonly periodStart: Date
  readonly value: string
}

/**
 * Decides a batch in memory, in arrival order, from the locked counters: a consumption either
 * fits every limit and is applied in full, or fails on the first limit it would cross and changes
 * nothing. Pure, so the rule is tested without a database.
 */
export const decideBatch = (
  items: ReadonlyArray<Consumption>,
  counters: Map<string, number>,
  seen: Set<string>
): ReadonlyArray<Either.Either<ReadonlyArray<ChargeResult>, LimitReached>> =>
  items.map((item) => {
    const planned: Array<ChargeResult> = []
    const pending = new Map<string, number>()
    const newlySeen: Array<string> = []
    for (const charge of item.charges) {
      const slot = slotKey(charge.meter, charge.period.start)
      let amount = charge.amount
      if (charge.distinctValue !== undefined) {
        const key = distinctKey(charge.meter, charge.period.start, charge.distinctValue)
        if (seen.has(key) || newlySeen.includes(key)) amount = 0
        else newlySeen.push(key)
      }
      const before = (pending.get(slot) ?? counters.get(slot) ?? 0)
      const after = before + amount
      if (amount > 0 && charge.limit !== undefined && charge.limit !== null && after > charge.limit) {
        return Either.left(
          new LimitReached({ meter: charge.meter as MeterName, limit: charge.limit, used: before, resetAt: charge.period.end })
        )
      }
      pending.set(slot, after)
      planned.push({ meter: charge.meter, charged: amount, used: after, limit: charge.limit, period: charge.period })
    }
    for (const [slot, used] of pending) counters.set(slot, used)
    for (const key of newlySeen) seen.add(key)
    return Either.right(planned)
  })

export class Metering extends Effect.Service<Metering>()("vda/Metering", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const processBatch = (items: ReadonlyArray<Consumption>) =>
      sql.withTransaction(Effect.gen(function*() {
        const { accountId, environment } = items[0]!
        const slots = new Map<string, { meter: string; periodStart: Date }>()
        for (const item of items) {
          for (const charge of item.charges) {
            slots.set(slotKey(charge.meter, charge.period.start), { meter: charge.meter, periodStart: charge.period.start })
          }
        }
        // Lock the counters in one canonical order so two processes never deadlock.
        const ordered = [...slots.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s)
        const locked = yield* sql<CounterRow>`
          insert into meter_counters (account_id, environment, meter, period_start, used)
          select ${accountId}, ${environment}, slot.meter, slot.period_start, 0
          from unnest(${ordered.map((s) => s.meter)}::text[], ${ordered.map((s) => s.periodStart)}::timestamptz[])
            with ordinality as slot(meter, period_start, position)
          order by slot.position
          on conflict (account_id, environment, meter, period_start) do update set used = meter_counters.used
          returning meter, period_start, used`
        const counters = new Map(locked.map((row) => [slotKey(row.meter, row.periodStart), row.used]))

        const candidates = items.flatMap((item) =>
          item.charges.flatMap((c) => (c.distinctValue === undefined ? [] : [{ ...c, value: c.distinctValue }]))
        )
        const seen = new Set<string>()
        if (candidates.length > 0) {
          const rows = yield* sql<DistinctRow>`
            select meter, period_start, value from meter_distinct_values
            where account_id = ${accountId} and environment = ${environment}
              and (meter, period_start, value) in (
                select * from unnest(${candidates.map((c) => c.meter)}::text[],
                  ${candidates.map((c) => c.period.start)}::timestamptz[], ${candidates.map((c) => c.value)}::text[]))`
          for (const row of rows) seen.add(distinctKey(row.meter, row.periodStart, row.value))
        }

        const before = new Map(counters)
        const seenBefore = new Set(seen)
        const results = decideBatch(items, counters, seen)

        const changed = [...counters.entries()].filter(([slot, used]) => before.get(slot) !== used)
        if (changed.length > 0) {
          yield* sql`
            update meter_counters as c set used = d.used
            from unnest(${changed.map(([slot]) => slots.get(slot)!.meter)}::text[],
              ${changed.map(([slot]) => slots.get(slot)!.periodStart)}::timestamptz[],
              ${changed.map(([, used]) => used)}::integer[]) as d(meter, period_start, used)
            where c.account_id = ${accountId} and c.environment = ${environment}
              and c.meter = d.meter and c.period_start = d.period_start`
        }
        const added = candidates.filter((c) => {
          const key = distinctKey(c.meter, c.period.start, c.value)
          return seen.has(key) && !seenBefore.has(key)
        })
        if (added.length > 0) {
          yield* sql`
            insert into meter_distinct_values (account_id, environment, meter, period_start, value)
            select ${accountId}, ${environment}, * from unnest(${added.map((c) => c.meter)}::text[],
              ${added.map((c) => c.period.start)}::timestamptz[], ${added.map((c) => c.value)}::text[])
            on conflict do nothing`
        }
        const pricing = items.flatMap((item, i) =>
          item.modulePricing !== undefined && Either.isRight(results[i]!) ? [item.modulePricing] : []
        )
        for (const p of pricing) {
          yield* sql`
            insert into module_billing_periods (account_id, environment, period_start, unit_price_cents, included)
            values (${accountId}, ${environment}, ${p.period.start}, ${p.unitPriceCents}, ${p.included})
            on conflict do nothing`
        }
        return results
      }))

    const batcher = yield* Batcher.make({
      key: (item: Consumption) => `${item.accountId}/${item.environment}`,
      process: (_key, items) => processBatch(items)
    })

    /**
     * Whether `consumption` would fit right now, from a plain read (no lock): lets callers refuse
     * before doing expensive work. The authoritative decision is still `consume`.
     */
    const precheck = (consumption: Consumption) =>
      Effect.gen(function*() {
        const limited = consumption.charges.filter((c) => c.limit !== undefined && c.limit !== null)
        if (limited.length === 0) return
        const rows = yield* sql<CounterRow>`
          select meter, period_start, used from meter_counters
          where account_id = ${consumption.accountId} and environment = ${consumption.environment}
            and (meter, period_start) in (
              select * from unnest(${limited.map((c) => c.meter)}::text[], ${limited.map((c) => c.period.start)}::timestamptz[]))`
        const distinct = limited.filter((c) => c.distinctValue !== undefined)
        const seenRows = distinct.length === 0 ? [] : yield* sql<DistinctRow>`
          select meter, period_start, value from meter_distinct_values
          where account_id = ${consumption.accountId} and environment = ${consumption.environment}
            and (meter, period_start, value) in (
              select * from unnest(${distinct.map((c) => c.meter)}::text[],
                ${distinct.map((c) => c.period.start)}::timestamptz[], ${distinct.map((c) => c.distinctValue!)}::text[]))`
        const [result] = decideBatch(
          [{ ...consumption, charges: limited }],
          new Map(rows.map((r) => [slotKey(r.meter, r.periodStart), r.used])),
          new Set(seenRows.map((r) => distinctKey(r.meter, r.periodStart, r.value)))
        )
        if (result && Either.isLeft(result)) return yield* result.left
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return {
      precheck,
      /**
       * Charge every unit of `consumption` or none: fails with `LimitReached` (nothing charged)
       * when any limited meter would go past its limit.
       */
      consume: (consumption: Consumption): Effect.Effect<ReadonlyArray<ChargeResult>, LimitReached> =>
        batcher.submit(consumption).pipe(Effect.catchTag("SqlError", Effect.die))
    }
  })
}) {}
