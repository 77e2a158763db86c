/**
 * Contract of the vehicle query: `GET /v2/vehicles/{plate}` and the Vehicle response.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiKeyAuth } from "../accounts/Security.js"
import { Classification, CodiaLookup, SheetLookup, Tire } from "../catalog/Api.js"
import { Scenario } from "../sandbox/Scenarios.js"

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
  debug: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "VehicleData" })
export type VehicleData = typeof VehicleData.Type

export const VehicleResponse = Schema.Struct({
  success: Schema.Literal(true),
  found: Schema.Boolean,
  data: Schema.NullOr(VehicleData)
}).annotations({ identifier: "VehicleResponse" })
export type VehicleResponse = typeof VehicleResponse.Type

const Flag = Schema.BooleanFromString.annotations({ description: "true or false" })

export const VehicleQueryParams = Schema.Struct({
  codia: Schema.optional(Flag),
  sheet: Schema.optional(Flag),
  tires: Schema.optional(Flag),
  classification: Schema.optional(Flag),
  debug: Schema.optional(Flag),
  onMiss: Schema.optional(Schema.Literal("search")),
  sandbox_scenario: Schema.optional(Scenario),
  sandbox_seed: Schema.optional(Schema.String.pipe(Schema.maxLength(128)))
})
export type VehicleQueryParams = typeof VehicleQueryParams.Type

export class VehiclesApi extends HttpApiGroup.make("vehicles")
  .add(
    HttpApiEndpoint.get("getVehicle")`/v2/vehicles/${HttpApiSchema.param("plate", Schema.String)}`
      .setUrlParams(VehicleQueryParams)
      .addSuccess(VehicleResponse)
      .annotate(OpenApi.Summary, "Basic vehicle query")
      .annotate(
        OpenApi.Description,
        "Vehicle data for a plate (`AAA999` or `AA999AA`, any case) with optional enrichments. Consumes one plate query on every accepted call (found or not) and counts the plate once per day toward unique plates. `codia`, `sheet` and `tires` need a paid or custom plan. `sandbox_scenario` and `sandbox_seed` are accepted by the sandbox only."
      )
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Vehicles")
{}
