/**
 * What each kind of accepted call consumes (the spec's metering rules), as consumptions for the
 * consumption primitive.
 */
import type { Principal } from "../principal/Domain.js"
import { type Consumption, makeCharge, type PlainConsumption } from "./Metering.js"
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
      makeCharge(METER.plate_queries, 1, month, entitlements.plateQueriesMonthly),
      makeCharge(METER.unique_plates, 1, day, entitlements.uniquePlatesDaily, plate),
      makeCharge(byVersion(version, METER.plate_queries), 1, month),
      makeCharge(byDay(METER.plate_queries), 1, day)
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
      makeCharge(byVersion("v1", "reports"), 1, monthOf(at, principal.timezone))
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
      makeCharge(METER.module_queries, modules.length, month, principal.entitlements.moduleQueriesMonthly),
      makeCharge(byVersion(version, METER.module_queries), modules.length, month),
      makeCharge(byDay(METER.module_queries), modules.length, dayOf(at, principal.timezone)),
      ...modules.map((module) => makeCharge(byModule(module), 1, month))
    ],
    ...(principal.modulePricing ? { modulePricing: { period: month, ...principal.modulePricing } } : {})
  }
}
