/**
 * Counter names in `meter_counters`. The four limited meters carry the spec's names; the
 * per-version and per-module counters are plain counters beside them.
 */
import { Module } from "../modules/Names.js"
import { METER } from "../platform/contract/MeterNames.js"

export type ApiVersion = "v1" | "v2"

/** The monthly meters, also counted per version and per day. */
type MonthlyMeter = typeof METER.plate_queries | typeof METER.module_queries
export type VersionedMeter = MonthlyMeter | "reports"

// Counter names are made once, not on every charge: the admission's batches compare them, and a
// name made anew is compared character by character, where the same string compares at once.
const namesOf = <A extends string, B extends string>(values: ReadonlyArray<A>, name: (value: A) => B) =>
  Object.fromEntries(values.map((value) => [value, name(value)])) as Record<A, B>

const VERSIONED_METERS: ReadonlyArray<VersionedMeter> = [METER.plate_queries, METER.module_queries, "reports"]
const VERSIONED = {
  v1: namesOf(VERSIONED_METERS, (meter) => `v1:${meter}`),
  v2: namesOf(VERSIONED_METERS, (meter) => `v2:${meter}`)
}

export const byVersion = (version: ApiVersion, meter: VersionedMeter) => VERSIONED[version][meter]

const DAILY = namesOf([METER.plate_queries, METER.module_queries], (meter) => `day:${meter}` as const)

/** The day's count of a monthly meter, for the console's daily chart (charged with it, in its transaction). */
export const byDay = (meter: MonthlyMeter) => DAILY[meter]

const BY_MODULE = namesOf(Module.literals, (module) => `module:${module}`)

export const byModule = (module: Module) => BY_MODULE[module]

/** The month's plate queries carried over from the old system (already inside `plate_queries`). */
export const LEGACY_OPENING_PLATE_QUERIES = `legacy:${METER.plate_queries}`

/** `meteringPolicyVersion` in usage: bump when the rules of what consumes what change. */
export const METERING_POLICY_VERSION = "2026-11"
