/**
 * The v1 contract's shapes (DESIGN §11), written down independently of the service's schemas.
 */
import {
  array,
  boolean,
  dateTime,
  literal,
  nonNegativeInt,
  nullable,
  number,
  object,
  type Shape,
  string,
  VehicleData
} from "./SpecShapes.js"
import { KeyEntry, ModulesOperation } from "./SpecShapes.js"

const LIMIT = nullable(nonNegativeInt)
const ok = (data: Shape) => object({ success: literal(true), data })

export const V1Error = (code: string, withDetails = false): Shape =>
  object({
    success: literal(false),
    error: object({
      code: literal(code),
      message: string,
      requestId: string,
      retryable: boolean,
      ...(withDetails
        ? { details: object({ meter: string, limit: LIMIT, used: nonNegativeInt, resetAt: dateTime }) }
        : {})
    })
  })

/** v2's vehicle data without the enrichments (the sandbox's own fields stay). */
const V1VehicleData: Shape = (v, p) => {
  const enrichments = ["codia", "sheet", "classification", "tires", "debug"].filter((k) => typeof v === "object" && v !== null && k in v)
  return [...enrichments.map((k) => `${p}.${k}: not in the v1 contract`), ...VehicleData(v, p)]
}

export const V1BasicVehicle = object({ success: literal(true), found: boolean, data: nullable(V1VehicleData) })

/** v2's modules operation without `kind`, with `completedAt`. */
const V1ModulesOperationData: Shape = (v, p) => {
  if (typeof v !== "object" || v === null) return [`${p}: expected object`]
  const { completedAt, ...rest } = v as Record<string, unknown>
  const problems = "kind" in rest ? [`${p}.kind: not in the v1 contract`] : []
  if (!("completedAt" in (v as object))) problems.push(`${p}.completedAt: missing`)
  problems.push(...nullable(dateTime)(completedAt, `${p}.completedAt`))
  return [...problems, ...ModulesOperation({ ...rest, kind: "modules" }, p)]
}
export const V1ModulesOperation = ok(V1ModulesOperationData)

const usedLimit = object({ used: nonNegativeInt, limit: LIMIT })
const remaining = { used: nonNegativeInt, limit: LIMIT, remaining: LIMIT }

export const V1CustomBilling = object({
  contract: object({ status: literal("active") }),
  period: object({ key: string, start: dateTime, end: dateTime }),
  usage: object({
    basic: object(remaining),
    report: object(remaining),
    modules: object({ ...remaining, overage: nonNegativeInt, subtotal_cents: nonNegativeInt, currency: literal("ARS") })
  }),
  billing: object({
    base: object({ estimated_total_cents: nonNegativeInt, currency: literal("ARS"), pricing_mode: literal("custom"), tier_name: string }),
    modules: object({ estimated_overage_cents: nonNegativeInt, currency: literal("ARS") })
  })
})

export const V1Status = ok(object({
  owner: string,
  plan: literal("free", "starter", "growth", "scale", "custom"),
  usage: object({ fast: usedLimit, intelligent: usedLimit, miss: usedLimit }),
  rateLimits: object({ rpm_total: LIMIT, rpm_intelligent: LIMIT }),
  resetAt: dateTime,
  customBilling: nullable(V1CustomBilling),
  keys: array(KeyEntry)
}))

export const V1WebhookConfig = ok(object({ owner_ref: string, url: nullable(string), secret: string, enabled: boolean, updated_at: dateTime }))

export const V1DeliveriesList = ok(object({
  deliveries: array(object({
    id: string,
    event_type: string,
    api_version: literal("v1", "v2"),
    status: literal("pending", "processed", "failed"),
    attempts: nonNegativeInt,
    response_status: nullable(number),
    next_attempt_at: dateTime,
    created_at: dateTime,
    payload: (v, p) => (typeof v === "object" && v !== null ? [] : [`${p}: expected the event`])
  })),
  limit: nonNegativeInt,
  offset: nonNegativeInt
}))

export const V1Digest = object({
  currency: literal("ARS"),
  finesCount: nonNegativeInt,
  finesAmount: number,
  taxDebtCount: nonNegativeInt,
  taxDebtAmount: number,
  vtvStatus: literal("valid", "expired", "none", "unknown"),
  gncStatus: literal("active", "none", "unknown"),
  alerts: array(literal("unpaid_fines", "tax_debt", "vtv_expired", "vtv_missing", "module_unavailable"))
})

const V1ReportData: Shape = (v, p) => {
  if (typeof v !== "object" || v === null) return [`${p}: expected object`]
  const { report, ...rest } = v as Record<string, unknown>
  const problems = object({ id: string, status: literal("queued", "processing", "completed", "partial", "failed"), plate: string, createdAt: dateTime, updatedAt: dateTime, completedAt: nullable(dateTime) })(rest, p)
  if (!("report" in (v as object))) return [...problems, `${p}.report: missing`]
  if (report === null) return problems
  const modules = (report as { results?: unknown }).results
  return [
    ...problems,
    ...object({ vehicle: nullable(VehicleData), results: (r, q) => (typeof r === "object" && r !== null ? [] : [`${q}: expected object`]), digest: V1Digest })(report, `${p}.report`),
    // the results are v2's module results
    ...ModulesOperation({ id: "x", kind: "modules", status: "completed", plate: "x", createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z", modules }, `${p}.report.results`)
  ]
}
export const V1Report = ok(V1ReportData)
