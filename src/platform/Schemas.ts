/**
 * Schema building blocks shared by every capability's contract.
 */
import { Schema } from "effect"

/** A date-time on the wire: RFC 3339, always emitted in UTC with milliseconds. */
export const DateTimeUtc = Schema.Date.annotations({
  identifier: "DateTime",
  jsonSchema: { type: "string", format: "date-time", examples: ["2026-11-21T23:00:00.000Z"] }
})

export const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

/** An allowance: null is unlimited, 0 is disabled. */
export const Limit = Schema.NullOr(NonNegativeInt)

export const Module = Schema.Literal("fines", "vtv", "tax_debt", "gnc")
export type Module = typeof Module.Type
export const ALL_MODULES: ReadonlyArray<Module> = Module.literals
