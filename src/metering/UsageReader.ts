/**
 * Builds the Usage object from the counters of the current periods.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { accountKey, type Principal } from "../principal/Domain.js"
import * as Batcher from "../platform/batching/Batcher.js"
import { METER } from "../platform/contract/MeterNames.js"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import type { Environment } from "../platform/http/RequestContext.js"
import type { Module } from "../modules/Names.js"
import type { MeterUsage, ModuleUsage, Usage } from "./Api.js"
import { type ApiVersion, byDay, byModule, byVersion, LEGACY_OPENING_PLATE_QUERIES, METERING_POLICY_VERSION } from "./Meters.js"
import { dayOf, minuteOf, monthOf, type Period } from "./Periods.js"

/** A counter's value in one period (a day's count of a monthly meter for `daily`). */
export const CounterRow = Schema.Struct({ meter: Schema.String, periodStart: Schema.Date, used: NonNegativeInt })
export type CounterRow = typeof CounterRow.Type

/** A custom plan's module billing terms. */
export const BillingRow = Schema.Struct({ unitPriceCents: NonNegativeInt, included: NonNegativeInt })
export type BillingRow = typeof BillingRow.Type

const meterUsage = (limit: number | null, used: number, period: Period): MeterUsage => ({
  limit,
  used,
  remaining: limit === null ? null : Math.max(0, limit - used),
  startsAt: period.start,
  endsAt: period.end
})

/** The periods a usage read counts at `at`: the account's month and day, and the minute. */
export const usagePeriodsOf = (principal: Principal, at: number) => ({
  month: monthOf(at, principal.timezone),
  day: dayOf(at, principal.timezone),
  minute: minuteOf(at)
})

export type UsagePeriods = ReturnType<typeof usagePeriodsOf>

/**
 * The Usage object, from the counters of `periods` (rows of other periods are ignored) and, for
 * a custom plan, the module billing terms frozen when this month's period opened (the current
 * terms when nothing has been consumed yet).
 */
export const usageOf = (
  principal: Principal,
  periods: UsagePeriods,
  rows: ReadonlyArray<CounterRow>,
  frozen: BillingRow | undefined
): Usage => {
  const { month, day, minute } = periods
  const { environment, entitlements } = principal
  const used = (meter: string, period: Period) =>
    rows.find((r) => r.meter === meter && r.periodStart.getTime() === period.start.getTime())?.used ?? 0

  const versionUsage = (version: ApiVersion) => ({
    plateQueries: used(byVersion(version, METER.plate_queries), month),
    moduleQueries: used(byVersion(version, METER.module_queries), month),
    reports: used(byVersion(version, "reports"), month)
  })
  const v1 = versionUsage("v1")
  const v1Used = v1.plateQueries + v1.moduleQueries + v1.reports > 0

  const usage: Usage = {
    environment,
    apiVersion: "v2",
    meteringPolicyVersion: METERING_POLICY_VERSION,
    entitlements,
    timezone: principal.timezone,
    plateQueries: meterUsage(entitlements.plateQueriesMonthly, used(METER.plate_queries, month), month),
    moduleQueries: meterUsage(entitlements.moduleQueriesMonthly, used(METER.module_queries, month), month),
    uniquePlates: meterUsage(entitlements.uniquePlatesDaily, used(METER.unique_plates, day), day),
    requests: meterUsage(entitlements.requestsPerMinute, used(METER.requests, minute), minute),
    byVersion: v1Used ? { v1, v2: versionUsage("v2") } : { v2: versionUsage("v2") },
    ...(rows.some((r) => r.meter === LEGACY_OPENING_PLATE_QUERIES && r.periodStart.getTime() === month.start.getTime())
      ? { legacyOpeningBalance: { plateQueries: used(LEGACY_OPENING_PLATE_QUERIES, month), source: "owner_quotas.monthly_used" as const } }
      : {})
  }
  if (principal.modulePricing === null) return usage

  const terms = frozen ?? principal.modulePricing
  const modules: Partial<Record<Module, ModuleUsage>> = {}
  for (const module of entitlements.enabledModules) {
    const moduleUsed = used(byModule(module), month)
    modules[module] = {
      used: moduleUsed,
      included: terms.included,
      overage: Math.max(0, moduleUsed - terms.included),
      unitPriceCents: terms.unitPriceCents,
      currency: "ARS"
    }
  }
  return { ...usage, modules }
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const counters = SqlRows.findAll("meter counters", CounterRow)
  const billing = SqlRows.findOneOption("module billing period", BillingRow)

  // `vda_account_status` reads the same counters; a plain statement is faster than a function here
  // (docs/architecture.md, "Migrations and database functions")
  const readNow = Effect.fnUntraced(function*(principal: Principal) {
    const periods = usagePeriodsOf(principal, yield* Clock.currentTimeMillis)
    const { month, day, minute } = periods
    const { accountId, environment } = principal
    const rows = yield* counters(sql`
      select meter, period_start, used from meter_counters
      where account_id = ${accountId} and environment = ${environment}
        and period_start = any(${[month.start, day.start, minute.start]}::timestamptz[])`)
    if (principal.modulePricing === null) return usageOf(principal, periods, rows, undefined)
    const frozen = yield* billing(sql`
      select unit_price_cents, included from module_billing_periods
      where account_id = ${accountId} and environment = ${environment} and period_start = ${month.start}`)
    return usageOf(principal, periods, rows, Option.getOrUndefined(frozen))
  }, Effect.orDie)

  /** The daily plate and module counts of the days starting at or after `from`. */
  const daily = (accountId: string, environment: Environment, from: Date) =>
    counters(sql`
        select meter, period_start, used from meter_counters
        where account_id = ${accountId} and environment = ${environment}
          and meter = any(${[byDay(METER.plate_queries), byDay(METER.module_queries)]}::text[]) and period_start >= ${from}
        order by period_start`).pipe(Effect.orDie)

  return {
    /** The caller's usage now; concurrent reads of one account and environment share one. */
    read: yield* Batcher.sharedReads({ key: accountKey, read: readNow }),
    daily
  }
})

export class UsageReader extends Context.Service<UsageReader, Effect.Success<typeof make>>()("vda/UsageReader", { make }) {
  static readonly layer = Layer.effect(UsageReader, make)
}
