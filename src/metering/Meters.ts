/**
 * Counter names in `meter_counters`. The four limited meters carry the spec's names; the
 * per-version and per-module counters are plain counters beside them.
 */
import { Module } from "../modules/Names.js"
import { METER } from "../platform/contract/MeterNames.js"

const API_VERSIONS = ["v1", "v2"] as const
export type ApiVersion = (typeof API_VERSIONS)[number]

/** The monthly meters, also counted per version and per day. */
const MONTHLY_METERS = [METER.plate_queries, METER.module_queries] as const
type MonthlyMeter = (typeof MONTHLY_METERS)[number]
const VERSIONED_METERS = [...MONTHLY_METERS, "reports"] as const
export type VersionedMeter = (typeof VERSIONED_METERS)[number]

// Counter names are made once, not on every charge: the admission's batches compare them, and a
// name made anew is compared character by character, where the same string compares at once.
// Each list is its type's every member, so every name is there.
const namesOf = <A extends string, B>(values: ReadonlyArray<A>, name: (value: A) => B) =>
  Object.fromEntries(values.map((value) => [value, name(value)])) as Record<A, B>

const VERSIONED = namesOf(API_VERSIONS, (version) => namesOf(VERSIONED_METERS, (meter) => `${version}:${meter}`))

export const byVersion = (version: ApiVersion, meter: VersionedMeter) => VERSIONED[version][meter]

const DAILY = namesOf(MONTHLY_METERS, (meter) => `day:${meter}` as const)

/** The day's count of a monthly meter, for the console's daily chart (charged with it, in its transaction). */
export const byDay = (meter: MonthlyMeter) => DAILY[meter]

const BY_MODULE = namesOf(Module.literals, (module) => `module:${module}`)

export const byModule = (module: Module) => BY_MODULE[module]

/** The month's plate queries carried over from the old system (already inside `plate_queries`). */
export const LEGACY_OPENING_PLATE_QUERIES = `legacy:${METER.plate_queries}`

/** `meteringPolicyVersion` in usage: bump when the rules of what consumes what change. */
export const METERING_POLICY_VERSION = "2026-11"
