/**
 * Contract of durable operations: the module query (`POST /v2/vehicles/{plate}/modules`), the
 * Operation resource and its polling endpoint.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiKeyAuth } from "../accounts/Security.js"
import { FinesData, GncData, TaxDebtData, VtvData } from "../modules/Records.js"
import { DateTimeUtc } from "../platform/Schemas.js"
import { VehicleResponse } from "../vehicles/Response.js"

export const OperationStatus = Schema.Literal("queued", "processing", "completed", "partial", "failed")

export const ModuleError = Schema.Struct({
  code: Schema.Literal("module_unavailable"),
  message: Schema.String,
  retryable: Schema.Boolean
}).annotations({ identifier: "ModuleError" })

export const ModuleWarning = Schema.Struct({
  code: Schema.Literal("reduced_coverage"),
  message: Schema.String
}).annotations({ identifier: "ModuleWarning" })

const moduleResult = <A, I>(data: Schema.Schema<A, I>, identifier: string) =>
  Schema.Struct({
    status: OperationStatus,
    data: Schema.NullOr(data),
    error: Schema.NullOr(ModuleError),
    warnings: Schema.optional(Schema.Array(ModuleWarning))
  }).annotations({ identifier })

export const ModuleResults = Schema.Struct({
  fines: Schema.optional(moduleResult(FinesData, "FinesResult")),
  vtv: Schema.optional(moduleResult(VtvData, "VtvResult")),
  tax_debt: Schema.optional(moduleResult(TaxDebtData, "TaxDebtResult")),
  gnc: Schema.optional(moduleResult(GncData, "GncResult"))
}).annotations({ identifier: "ModuleResults" })
export type ModuleResults = typeof ModuleResults.Type

const common = {
  id: Schema.String,
  status: OperationStatus,
  plate: Schema.String,
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}

export const ModulesOperation = Schema.Struct({
  ...common,
  kind: Schema.Literal("modules"),
  modules: ModuleResults
}).annotations({ identifier: "ModulesOperation" })
export type ModulesOperation = typeof ModulesOperation.Type

export const VehicleSearchError = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, retryable: Schema.Boolean })
}).annotations({ identifier: "VehicleSearchError" })

export const VehicleOperation = Schema.Struct({
  ...common,
  kind: Schema.Literal("vehicle"),
  result: Schema.NullOr(Schema.Union(VehicleResponse, VehicleSearchError))
}).annotations({ identifier: "VehicleOperation" })
export type VehicleOperation = typeof VehicleOperation.Type

export const Operation = Schema.Union(ModulesOperation, VehicleOperation).annotations({ identifier: "Operation" })
export type Operation = typeof Operation.Type

/** A new operation, answered 202 (documents the second success status; see operations/Http.ts). */
export class AcceptedModulesOperation extends Schema.Class<AcceptedModulesOperation>("AcceptedModulesOperation")(
  ModulesOperation.fields
) {}
export class AcceptedVehicleOperation extends Schema.Class<AcceptedVehicleOperation>("AcceptedVehicleOperation")(
  VehicleOperation.fields
) {}

/** Strings here: unknown and repeated modules have error codes of their own. */
export const ModulesRequest = Schema.Struct({
  modules: Schema.Array(Schema.String).pipe(Schema.minItems(1), Schema.maxItems(4))
}).annotations({
  identifier: "ModulesRequest",
  parseOptions: { onExcessProperty: "error" },
  description: "1 to 4 distinct modules among fines, vtv, tax_debt, gnc; no other properties"
})

export class OperationsApi extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.post("createModulesOperation")`/v2/vehicles/${HttpApiSchema.param("plate", Schema.String)}/modules`
      .setPayload(ModulesRequest)
      .addSuccess(ModulesOperation)
      .addSuccess(AcceptedModulesOperation, { status: 202 })
      .annotate(OpenApi.Summary, "Module query")
      .annotate(
        OpenApi.Description,
        "Starts a durable operation looking the plate up in the requested modules (202, `Location` to poll; N module queries consumed atomically), or returns the active operation with the same plate and exact module set (200, nothing consumed)."
      )
  )
  .add(
    HttpApiEndpoint.get("getOperation")`/v2/operations/${HttpApiSchema.param("id", Schema.String)}`
      .addSuccess(Operation)
      .annotate(OpenApi.Summary, "Poll an operation")
      .annotate(
        OpenApi.Description,
        "The operation's state; module results appear as they land. Only operations of the caller's account and environment. Consumes only RPM."
      )
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Operations")
{}
