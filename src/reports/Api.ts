/**
 * Contract of v1 reports (DESIGN §11): the V1Report resource, its digest and the request.
 */
import { Schema } from "effect"
import { OperationStatus } from "../contract/Operation.js"
import { ModuleResults } from "../operations/Api.js"
import { DateTimeUtc, NonNegativeInt } from "../platform/contract/Schemas.js"
import { VehicleData } from "../vehicles/Response.js"

export const V1Digest = Schema.Struct({
  currency: Schema.Literal("ARS"),
  finesCount: NonNegativeInt,
  finesAmount: Schema.Number,
  taxDebtCount: NonNegativeInt,
  taxDebtAmount: Schema.Number,
  vtvStatus: Schema.Literals(["valid", "expired", "none", "unknown"]),
  gncStatus: Schema.Literals(["active", "none", "unknown"]),
  alerts: Schema.Array(Schema.Literals(["unpaid_fines", "tax_debt", "vtv_expired", "vtv_missing", "module_unavailable"]))
}).annotate({ identifier: "V1Digest" })

export const V1Report = Schema.Struct({
  id: Schema.String,
  status: OperationStatus,
  plate: Schema.String,
  report: Schema.NullOr(Schema.Struct({
    vehicle: Schema.NullOr(VehicleData),
    results: ModuleResults,
    digest: V1Digest
  })),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc,
  completedAt: Schema.NullOr(DateTimeUtc)
}).annotate({ identifier: "V1Report", description: "`report` is null until the report is final" })
export type V1Report = typeof V1Report.Type

/** Other properties are refused: the endpoint taking it says so (`HttpApi.PayloadParseOptions`). */
export const V1ReportRequest = Schema.Struct({ plate: Schema.String }).annotate({ identifier: "V1ReportRequest" })

