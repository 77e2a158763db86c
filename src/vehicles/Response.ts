/**
 * The Vehicle response (200 of the vehicle query, and the result of a vehicle search operation).
 */
import { Schema } from "effect"
import { Classification, CodiaLookup, SheetLookup, Tire } from "../catalog/Api.js"

export const VehicleData = Schema.Struct({
  plate: Schema.String,
  make: Schema.String,
  model: Schema.String,
  year: Schema.NullOr(Schema.Int),
  firstRegistered: Schema.NullOr(Schema.String),
  totalOwners: Schema.Int,
  currentOwners: Schema.Int,
  currentLocation: Schema.Struct({ city: Schema.NullOr(Schema.String), province: Schema.NullOr(Schema.String) }),
  locations: Schema.Array(Schema.String),
  sourceDate: Schema.String,
  modelImage: Schema.NullOr(Schema.String),
  codia: Schema.optional(Schema.NullOr(CodiaLookup)),
  sheet: Schema.optional(Schema.NullOr(SheetLookup)),
  classification: Schema.optional(Classification),
  tires: Schema.optional(Schema.Array(Tire)),
  vehicleType: Schema.optional(Schema.String),
  sandbox: Schema.optional(Schema.Literal(true)),
  scenario: Schema.optional(Schema.String),
  debug: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "VehicleData" })
export type VehicleData = typeof VehicleData.Type

export const VehicleResponse = Schema.Struct({
  success: Schema.Literal(true),
  found: Schema.Boolean,
  data: Schema.NullOr(VehicleData)
}).annotate({ identifier: "VehicleResponse" })
export type VehicleResponse = typeof VehicleResponse.Type

