/**
 * Contract of durable operations: the module query (`POST /v2/vehicles/{plate}/modules`), the
 * Operation resource and its polling endpoint.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { API_ERRORS } from "../platform/http/Errors.js"
import { type ModuleError, type ModuleWarning, MODULES } from "../../workflows/shared.js"
import { acceptedSuccess, OperationStatus, operationFields } from "../contract/Operation.js"
import { FinesData, GncData, TaxDebtData, VtvData } from "../modules/Records.js"
import { VehicleOperation } from "../vehicles/SearchOperation.js"

/** The wire forms of a module's error and warning, as the orchestration defines them (workflows/shared.ts). */
export const ModuleErrorJson = Schema.Struct({
  code: Schema.Literal("module_unavailable"),
  message: Schema.String,
  retryable: Schema.Boolean
}).annotate({ identifier: "ModuleError" }) satisfies Schema.Schema<ModuleError>

export const ModuleWarningJson = Schema.Struct({
  code: Schema.Literal("reduced_coverage"),
  message: Schema.String
}).annotate({ identifier: "ModuleWarning" }) satisfies Schema.Schema<ModuleWarning>

const moduleResult = <S extends Schema.Constraint>(data: S, identifier: string) =>
  Schema.Struct({
    status: OperationStatus,
    data: Schema.NullOr(data),
    error: Schema.NullOr(ModuleErrorJson),
    warnings: Schema.optional(Schema.Array(ModuleWarningJson))
  }).annotate({ identifier })

/** A module's stored state as the Operation shows it: `warnings` only when there are some. */
export const moduleResultOf = (module: {
  readonly status: typeof OperationStatus.Type
  readonly data: unknown
  readonly error: ModuleError | null
  readonly warnings: ReadonlyArray<ModuleWarning>
}) => ({
  status: module.status,
  data: module.data ?? null,
  error: module.error ?? null,
  ...(module.warnings.length > 0 ? { warnings: module.warnings } : {})
})

export const ModuleResults = Schema.Struct({
  fines: Schema.optional(moduleResult(FinesData, "FinesResult")),
  vtv: Schema.optional(moduleResult(VtvData, "VtvResult")),
  tax_debt: Schema.optional(moduleResult(TaxDebtData, "TaxDebtResult")),
  gnc: Schema.optional(moduleResult(GncData, "GncResult"))
}).annotate({ identifier: "ModuleResults" })
export type ModuleResults = typeof ModuleResults.Type

export const ModulesOperation = Schema.Struct({
  ...operationFields,
  kind: Schema.Literal("modules"),
  modules: ModuleResults
}).annotate({ identifier: "ModulesOperation" })
export type ModulesOperation = typeof ModulesOperation.Type

export const Operation = Schema.Union([ModulesOperation, VehicleOperation]).annotate({ identifier: "Operation" })
export type Operation = typeof Operation.Type

/** What a poll of an operation the caller does not have answers (404 `operation_not_found`). */
export const operationNotFoundMessage = (id: string) => `No operation ${id}`

/** A new operation, answered 202 (documents the second success status; see operations/Http.ts). */
export class AcceptedModulesOperation extends Schema.Class<AcceptedModulesOperation>("AcceptedModulesOperation")(
  ModulesOperation.fields
) {}

export const AcceptedModulesSuccess = acceptedSuccess(AcceptedModulesOperation)

/**
 * Strings here: unknown and repeated modules have error codes of their own. Other properties are
 * refused: the endpoints taking it say so (`HttpApi.PayloadParseOptions`).
 */
export const ModulesRequest = Schema.Struct({
  modules: Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(MODULES.length))
}).annotate({
  identifier: "ModulesRequest",
  description: `1 to ${MODULES.length} distinct modules among ${MODULES.join(", ")}; no other properties`
})

export class OperationsApi extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.post("createModulesOperation", "/v2/vehicles/:plate/modules", {
      params: { plate: Schema.String },
      payload: ModulesRequest,
      success: [ModulesOperation, AcceptedModulesSuccess],
      error: API_ERRORS
    })
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotate(OpenApi.Summary, "Module query")
      .annotate(
        OpenApi.Description,
        "Starts a durable operation looking the plate up in the requested modules (202, `Location` to poll; N module queries consumed atomically), or returns the active operation with the same plate and exact module set (200, nothing consumed)."
      )
  )
  .add(
    HttpApiEndpoint.get("getOperation", "/v2/operations/:id", { params: { id: Schema.String }, success: Operation, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Poll an operation")
      .annotate(
        OpenApi.Description,
        "The operation's state; module results appear as they land. Only operations of the caller's account and environment. Consumes only RPM."
      )
  )
  .annotate(OpenApi.Title, "Operations")
{}
