/**
 * Contract of the vehicle query: `GET /v2/vehicles/{plate}` and the Vehicle response.
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { API_ERRORS } from "../platform/http/Errors.js"
import { VehicleResponse } from "./Response.js"
import { AcceptedVehicleSuccess } from "./SearchOperation.js"

export { VehicleData, VehicleResponse } from "./Response.js"

/** What a vehicle query answers (503) when its source cannot. */
export const SOURCE_UNAVAILABLE_MESSAGE = "The vehicle source is temporarily unavailable; nothing was charged"

/** The sandbox's scenarios (`sandbox_scenario`); without one, the plate's digits pick it (the magic plates). */
export const Scenario = Schema.Literals(["default", "clean", "debt", "partial", "unavailable", "failed"])
export type Scenario = typeof Scenario.Type

const Flag = Schema.Literals(["true", "false"]).annotate({ description: "true or false" }).pipe(
  Schema.decodeTo(Schema.Boolean, SchemaTransformation.transform({ decode: (s) => s === "true", encode: (b) => (b ? "true" : "false") }))
)

export const VehicleQueryParams = Schema.Struct({
  codia: Schema.optional(Flag),
  sheet: Schema.optional(Flag),
  tires: Schema.optional(Flag),
  classification: Schema.optional(Flag),
  debug: Schema.optional(Flag),
  onMiss: Schema.optional(Schema.Literal("search")),
  sandbox_scenario: Schema.optional(Scenario),
  sandbox_seed: Schema.optional(Schema.String.check(Schema.isMaxLength(128)))
})
export type VehicleQueryParams = typeof VehicleQueryParams.Type

export class VehiclesApi extends HttpApiGroup.make("vehicles")
  .add(
    HttpApiEndpoint.get("getVehicle", "/v2/vehicles/:plate", {
      params: { plate: Schema.String },
      query: VehicleQueryParams,
      success: [VehicleResponse, AcceptedVehicleSuccess],
      error: API_ERRORS
    })
      .annotate(OpenApi.Summary, "Basic vehicle query")
      .annotate(
        OpenApi.Description,
        "Vehicle data for a plate (`AAA999` or `AA999AA`, any case) with optional enrichments. Consumes one plate query on every accepted call (found or not) and counts the plate once per day toward unique plates. With `onMiss=search`, a plate that must be fetched from the source is answered 202 with a vehicle operation to poll (`Location`) instead of waiting. `codia`, `sheet`, `tires` and `onMiss` need a paid or custom plan. `sandbox_scenario` and `sandbox_seed` are accepted by the sandbox only."
      )
  )
  .annotate(OpenApi.Title, "Vehicles")
{}
