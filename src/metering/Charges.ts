/**
 * What each kind of accepted call consumes (the spec's metering rules), as consumptions for the
 * consumption primitive.
 */
import type { Principal } from "../principal/Domain.js"
import type { Consumption, PlainConsumption } from "./Metering.js"
import type { Module } from "../modules/Names.js"
import { METER } from "../platform/contract/MeterNames.js"
import { type ApiVersion, byDay, byModule, byVersion } from "./Meters.js"
import { dayOf, monthOf } from "./Periods.js"

/** One plate query this month, and the plate once per account-day toward unique plates. */
export const plateQuery = (principal: Principal, plate: string, at: number, version: ApiVersion = "v2"): PlainConsumption => {
  const month = monthOf(at, principal.timezone)
  const day = dayOf(at, principal.timezone)
  const { entitlements } = principal
  return {
    accountId: principal.accountId,
    environment: principal.environment,
    charges: [
      { meter: METER.plate_queries, amount: 1, limit: entitlements.plateQueriesMonthly, period: month },
      {
        meter: METER.unique_plates,
        amount: 1,
        limit: entitlements.uniquePlatesDaily,
        period: day,
        distinctValue: plate
      },
      { meter: byVersion(version, METER.plate_queries), amount: 1, period: month },
      { meter: byDay(METER.plate_queries), amount: 1, period: day }
    ]
  }
}

/**
 * A v1 report: one plate query (and the plate toward unique plates), one module query per module,
 * and the report itself, all counted under v1 and decided together: everything or nothing.
 */
export const report = (principal: Principal, plate: string, modules: ReadonlyArray<Module>, at: number): Consumption => {
  const plateCharges = plateQuery(principal, plate, at, "v1")
  const moduleCharges = moduleQueries(principal, modules, at, "v1")
  return {
    ...moduleCharges,
    charges: [
      ...plateCharges.charges,
      ...moduleCharges.charges,
      { meter: byVersion("v1", "reports"), amount: 1, period: monthOf(at, principal.timezone) }
    ]
  }
}

/**
 * One module query per requested module this month, split by version and by module (custom plans
 * bill per module, at the price and included units frozen when the month's period opens).
 */
export const moduleQueries = (
  principal: Principal,
  modules: ReadonlyArray<Module>,
  at: number,
  version: ApiVersion = "v2"
): Consumption => {
  const month = monthOf(at, principal.timezone)
  return {
    accountId: principal.accountId,
    environment: principal.environment,
    charges: [
      { meter: METER.module_queries, amount: modules.length, limit: principal.entitlements.moduleQueriesMonthly, period: month },
      { meter: byVersion(version, METER.module_queries), amount: modules.length, period: month },
      { meter: byDay(METER.module_queries), amount: modules.length, period: dayOf(at, principal.timezone) },
      ...modules.map((module) => ({ meter: byModule(module), amount: 1, period: month }))
    ],
    ...(principal.modulePricing ? { modulePricing: { period: month, ...principal.modulePricing } } : {})
  }
}
