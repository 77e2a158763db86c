/**
 * Counter names in `meter_counters`. The four limited meters carry the spec's names; the
 * per-version and per-module counters are plain counters beside them.
 */
import type { Module } from "../modules/Names.js"
import { METER } from "../platform/contract/MeterNames.js"

export type ApiVersion = "v1" | "v2"

/** The monthly meters, also counted per version and per day. */
type MonthlyMeter = typeof METER.plate_queries | typeof METER.module_queries
export type VersionedMeter = MonthlyMeter | "reports"

export const byVersion = (version: ApiVersion, meter: VersionedMeter) => `${version}:${meter}`

const dailyOf = <M extends MonthlyMeter>(meter: M) => `day:${meter}` as const
// built once: the names are looked up on every charge
const DAILY = { [METER.plate_queries]: dailyOf(METER.plate_queries), [METER.module_queries]: dailyOf(METER.module_queries) }

/** The day's count of a monthly meter, for the console's daily chart (charged with it, in its transaction). */
export const byDay = (meter: MonthlyMeter) => DAILY[meter]

export const byModule = (module: Module) => `module:${module}`

/** The month's plate queries carried over from the old system (already inside `plate_queries`). */
export const LEGACY_OPENING_PLATE_QUERIES = `legacy:${METER.plate_queries}`

/** `meteringPolicyVersion` in usage: bump when the rules of what consumes what change. */
export const METERING_POLICY_VERSION = "2026-11"
