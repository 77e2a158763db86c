/**
 * A vehicle search as the Operation it is: the 202 of a vehicle query with `onMiss=search`,
 * polled at `/v2/operations/{id}` until its result is in.
 */
import { Schema } from "effect"
import { acceptedSuccess, operationFields } from "../contract/Operation.js"
import { VehicleResponse } from "./Response.js"

export const VehicleSearchError = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, retryable: Schema.Boolean })
}).annotate({ identifier: "VehicleSearchError" })

export const VehicleOperation = Schema.Struct({
  ...operationFields,
  kind: Schema.Literal("vehicle"),
  result: Schema.NullOr(Schema.Union([VehicleResponse, VehicleSearchError]))
}).annotate({ identifier: "VehicleOperation" })
export type VehicleOperation = typeof VehicleOperation.Type

/** A new vehicle search, answered 202 (documents the second success status of the vehicle query). */
export class AcceptedVehicleOperation extends Schema.Class<AcceptedVehicleOperation>("AcceptedVehicleOperation")(
  VehicleOperation.fields
) {}

export const AcceptedVehicleSuccess = acceptedSuccess(AcceptedVehicleOperation)
