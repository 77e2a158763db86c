/**
 * The meters that carry an allowance, by the spec's names: the one list. The 429 body names them
 * (platform/http/Errors.ts), metering charges and reads them; everything else derives from here.
 */
import { Schema } from "effect"

export const METER_NAMES = ["plate_queries", "module_queries", "unique_plates", "requests"] as const

export const MeterName = Schema.Literals(METER_NAMES)
export type MeterName = typeof MeterName.Type

/** Each meter by its own name, for code that means one of them: `METER.requests`. */
export const METER = Object.fromEntries(METER_NAMES.map((name) => [name, name])) as { readonly [M in MeterName]: M }
