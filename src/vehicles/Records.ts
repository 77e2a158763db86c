/**
 * Vehicle data as sources give it, and the registry file format (`vda registry import FILE`):
 * JSON Lines, one record per line, each with a `kind`.
 *
 *   {"kind":"vehicle","plate":"AD123BC","make":"VOLKSWAGEN","model":"GOL TREND 1.6 TRENDLINE 5P",
 *    "year":2019,"firstRegistered":"2019-05-14","totalOwners":2,"currentOwners":1,
 *    "currentLocation":{"city":"Rosario","province":"Santa Fe"},
 *    "locations":["Córdoba, Córdoba","Rosario, Santa Fe"],"sourceDate":"2026-10-28","modelImage":null}
 */
import { Effect, Schema } from "effect"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import { normalizePlate } from "./Plates.js"

const NonEmpty = Schema.Trim.check(Schema.isNonEmpty())

/** A calendar date, `YYYY-MM-DD`. */
export const CalendarDate = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/),
  Schema.makeFilter((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) || "not a calendar date")
)

export const PlateString = Schema.String.check(
  Schema.makeFilter((s) => normalizePlate(s) === s || "plate must be AAA999 or AA999AA in upper case")
)

/** The vehicle fields every source provides (the stable part of the Vehicle response). */
export const VehicleFacts = Schema.Struct({
  make: NonEmpty,
  model: NonEmpty,
  year: Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 1900, maximum: 2035 }))),
  firstRegistered: Schema.NullOr(CalendarDate),
  totalOwners: NonNegativeInt,
  currentOwners: NonNegativeInt,
  currentLocation: Schema.Struct({ city: Schema.NullOr(Schema.String), province: Schema.NullOr(Schema.String) }),
  locations: Schema.Array(Schema.String),
  sourceDate: CalendarDate,
  // absent or undefined: null
  modelImage: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null)))
}).check(Schema.makeFilter((v) => v.currentOwners <= v.totalOwners || "currentOwners cannot exceed totalOwners"))
export type VehicleFacts = typeof VehicleFacts.Type

// the owners check reads fields the registry line keeps: it stays
export const RegistryVehicle = VehicleFacts.mapFields(
  (fields) => ({ kind: Schema.Literal("vehicle"), plate: PlateString, ...fields }),
  { unsafePreserveChecks: true }
)
export type RegistryVehicle = typeof RegistryVehicle.Type
