/**
 * Counter names in `meter_counters`. The four limited meters carry the spec's names; the
 * per-version and per-module counters are plain counters beside them.
 */
import type { Module } from "../modules/Names.js"

export type ApiVersion = "v1" | "v2"
export type VersionedMeter = "plate_queries" | "module_queries" | "reports"

export const byVersion = (version: ApiVersion, meter: VersionedMeter) => `${version}:${meter}`

const DAILY = { plate_queries: "day:plate_queries", module_queries: "day:module_queries" } as const

/** The day's count of a monthly meter, for the console's daily chart (charged with it, in its transaction). */
export const byDay = (meter: keyof typeof DAILY) => DAILY[meter]

export const byModule = (module: Module) => `module:${module}`

/** The month's plate queries carried over from the old system (already inside `plate_queries`). */
export const LEGACY_OPENING_PLATE_QUERIES = "legacy:plate_queries"

/** `meteringPolicyVersion` in usage: bump when the rules of what consumes what change. */
export const METERING_POLICY_VERSION = "2026-11"
