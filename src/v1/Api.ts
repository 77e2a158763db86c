/**
 * Contract of the v1 API (DESIGN §11): the legacy paths and shapes, as a skin over the v2
 * services. Success answers are `{success: true, data}`; errors come in v1's envelope
 * `{success: false, error}` (the request pipeline puts them there).
 */
import { Schema, Struct } from "effect"
import { MODULES } from "../../workflows/shared.js"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { API_ERRORS } from "../platform/http/Errors.js"
import { KeyEntry } from "../accounts/Api.js"
import { acceptedSuccess, OperationStatus } from "../contract/Operation.js"
import { ModuleResults } from "../operations/Api.js"
import { DateTimeUtc, Limit, NonNegativeInt } from "../platform/contract/Schemas.js"
import { VehicleData } from "../vehicles/Response.js"
import { V1Report, V1ReportRequest } from "../reports/Api.js"
import { DeliveriesQuery } from "../webhooks/Api.js"

const ok = <S extends Schema.Constraint>(data: S, identifier: string) =>
  Schema.Struct({ success: Schema.Literal(true), data }).annotate({ identifier })

/** v1's vehicle: v2's `data` without the enrichments. */
export const V1VehicleData = VehicleData.mapFields(Struct.omit(["codia", "sheet", "classification", "tires", "debug"]))
  .annotate({ identifier: "V1VehicleData" })

export const V1BasicVehicle = Schema.Struct({
  success: Schema.Literal(true),
  found: Schema.Boolean,
  data: Schema.NullOr(V1VehicleData)
}).annotate({ identifier: "V1BasicVehicle" })

export const V1ModulesOperation = Schema.Struct({
  id: Schema.String,
  status: OperationStatus,
  plate: Schema.String,
  modules: ModuleResults,
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc,
  completedAt: Schema.NullOr(DateTimeUtc)
}).annotate({ identifier: "V1ModulesOperation" })
export type V1ModulesOperation = typeof V1ModulesOperation.Type

/** v1's modules events (DESIGN §11): the V1ModulesOperation as polled, with the event's id and name. */
export const V1ModulesEvent = Schema.Struct({
  eventId: Schema.String,
  event: Schema.Literals(["modules.completed", "modules.failed"]),
  ...V1ModulesOperation.fields
}).annotate({ identifier: "V1ModulesEvent" })

/** v1's report events: the V1Report as polled, with the event's id and name. */
export const V1ReportEvent = Schema.Struct({
  eventId: Schema.String,
  event: Schema.Literals(["report.completed", "report.failed"]),
  ...V1Report.fields
}).annotate({ identifier: "V1ReportEvent" })

export const V1Event = Schema.Union([V1ModulesEvent, V1ReportEvent]).annotate({ identifier: "V1Event" })
export type V1Event = typeof V1Event.Type
export type V1EventType = V1Event["event"]

/** Other properties are refused: the endpoint taking it says so (`HttpApi.PayloadParseOptions`). */
export const V1ModulesRequest = Schema.Struct({
  plate: Schema.String,
  modules: Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(4))
}).annotate({
  identifier: "V1ModulesRequest",
  description: `The plate and 1 to ${MODULES.length} distinct modules among ${MODULES.join(", ")}; no other properties`
})

export const V1WebhookConfig = Schema.Struct({
  owner_ref: Schema.String,
  url: Schema.NullOr(Schema.String),
  secret: Schema.String,
  enabled: Schema.Boolean,
  updated_at: DateTimeUtc
}).annotate({ identifier: "V1WebhookConfig" })

/** Other properties are refused: the endpoint taking it says so (`HttpApi.PayloadParseOptions`). */
export const V1WebhookConfigUpdate = Schema.Struct({
  url: Schema.optional(Schema.NullOr(Schema.String)),
  enabled: Schema.optional(Schema.Boolean),
  rotate_secret: Schema.optional(Schema.Boolean)
}).annotate({
  identifier: "V1WebhookConfigUpdate",
  description: "Every field optional; omitted ones are kept. `url: null` removes the URL and disables the webhook."
})

export const V1Delivery = Schema.Struct({
  id: Schema.String,
  event_type: Schema.String,
  api_version: Schema.Literals(["v1", "v2"]),
  status: Schema.Literals(["pending", "processed", "failed"]),
  attempts: NonNegativeInt,
  response_status: Schema.NullOr(Schema.Number),
  next_attempt_at: DateTimeUtc,
  created_at: DateTimeUtc,
  payload: Schema.Unknown
}).annotate({ identifier: "V1Delivery" })

const UsedOf = Schema.Struct({ used: NonNegativeInt, limit: Limit })
const Remaining = { used: NonNegativeInt, limit: Limit, remaining: Limit }

export const V1CustomBilling = Schema.Struct({
  contract: Schema.Struct({ status: Schema.Literal("active") }),
  period: Schema.Struct({ key: Schema.String, start: DateTimeUtc, end: DateTimeUtc }),
  usage: Schema.Struct({
    basic: Schema.Struct(Remaining),
    report: Schema.Struct(Remaining),
    modules: Schema.Struct({
      ...Remaining,
      overage: NonNegativeInt,
      subtotal_cents: NonNegativeInt,
      currency: Schema.Literal("ARS")
    })
  }),
  billing: Schema.Struct({
    base: Schema.Struct({
      estimated_total_cents: NonNegativeInt,
      currency: Schema.Literal("ARS"),
      pricing_mode: Schema.Literal("custom"),
      tier_name: Schema.String
    }),
    modules: Schema.Struct({ estimated_overage_cents: NonNegativeInt, currency: Schema.Literal("ARS") })
  })
}).annotate({ identifier: "V1CustomBilling" })

export const V1PlanName = Schema.Literals(["free", "starter", "growth", "scale", "custom"])

export const V1Status = Schema.Struct({
  owner: Schema.String,
  plan: V1PlanName,
  usage: Schema.Struct({ fast: UsedOf, intelligent: UsedOf, miss: UsedOf }),
  rateLimits: Schema.Struct({ rpm_total: Limit, rpm_intelligent: Limit }),
  resetAt: DateTimeUtc,
  customBilling: Schema.NullOr(V1CustomBilling),
  keys: Schema.Array(KeyEntry)
}).annotate({ identifier: "V1Status" })
export type V1Status = typeof V1Status.Type

// the success envelopes that two endpoints share, defined once
const V1ModulesOperationResponse = ok(V1ModulesOperation, "V1ModulesOperationResponse")
export const V1ReportResponse = ok(V1Report, "V1ReportResponse")

/** A new v1 operation, answered 202 (documents the second success status; see v1/Http.ts). */
export class AcceptedV1ModulesOperation extends Schema.Class<AcceptedV1ModulesOperation>("AcceptedV1ModulesOperation")(
  V1ModulesOperationResponse.fields
) {}

/** A new report, answered 202 (as above). */
export class AcceptedV1Report extends Schema.Class<AcceptedV1Report>("AcceptedV1Report")(V1ReportResponse.fields) {}
const V1WebhookConfigResponse = ok(V1WebhookConfig, "V1WebhookConfigResponse")

export class V1Api extends HttpApiGroup.make("v1")
  .add(
    HttpApiEndpoint.get("v1GetBasicVehicle", "/v1/vehicles/basic", {
      query: { plate: Schema.optional(Schema.String) },
      success: V1BasicVehicle,
      error: API_ERRORS
    })
      .annotate(OpenApi.Summary, "Basic vehicle query (v1)")
      .annotate(OpenApi.Description, "v2's vehicle query without enrichments. One plate query, counted under `byVersion.v1`.")
  )
  .add(
    HttpApiEndpoint.post("v1CreateModulesOperation", "/v1/vehicles/modules", {
      payload: V1ModulesRequest,
      success: [V1ModulesOperationResponse, acceptedSuccess(AcceptedV1ModulesOperation)],
      error: API_ERRORS
    })
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotate(OpenApi.Summary, "Module query (v1)")
      .annotate(
        OpenApi.Description,
        "As v2's module query: 202 for a new operation (N module queries), 200 when an identical active v1 operation is reused (nothing consumed). A v1 request never reuses a v2 operation."
      )
  )
  .add(
    HttpApiEndpoint.get("v1GetModulesOperation", "/v1/vehicles/modules/:id", {
      params: { id: Schema.String },
      success: V1ModulesOperationResponse,
      error: API_ERRORS
    })
      .annotate(OpenApi.Summary, "Poll a module operation (v1)")
  )
  .add(
    HttpApiEndpoint.post("v1CreateReport", "/v1/reports", {
      payload: V1ReportRequest,
      success: [V1ReportResponse, acceptedSuccess(AcceptedV1Report)],
      error: API_ERRORS
    })
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotate(OpenApi.Summary, "Vehicle report (v1)")
      .annotate(
        OpenApi.Description,
        "A durable report: the vehicle and every module enabled for the account, with a digest. Consumes at once 1 plate query (and the plate toward unique plates), one module query per enabled module and 1 report, all under v1: 202. An active report for the same plate is reused at no cost: 200. Over any limit, nothing is consumed."
      )
  )
  .add(
    HttpApiEndpoint.get("v1GetReport", "/v1/reports/:id", { params: { id: Schema.String }, success: V1ReportResponse, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Poll a report (v1)")
  )
  .add(
    HttpApiEndpoint.get("v1GetStatus", "/v1/status", { success: ok(V1Status, "V1StatusResponse"), error: API_ERRORS })
      .annotate(OpenApi.Summary, "Account status (v1)")
      .annotate(
        OpenApi.Description,
        "Plan (v1 names: starter is v2's basic), fast (plate queries this month), intelligent (module queries this month) and miss (unique plates today) usage, rate limits, the monthly reset, and for custom plans the billing estimate. Consumes only RPM."
      )
  )
  .add(
    HttpApiEndpoint.get("v1GetWebhookConfig", "/v1/webhooks/config", { success: V1WebhookConfigResponse, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Webhook configuration (v1)")
  )
  .add(
    HttpApiEndpoint.patch("v1UpdateWebhookConfig", "/v1/webhooks/config", {
      payload: V1WebhookConfigUpdate,
      success: V1WebhookConfigResponse,
      error: API_ERRORS
    })
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotate(OpenApi.Summary, "Change the webhook configuration (v1)")
      .annotate(OpenApi.Description, "The same configuration as v2's, with the same rules and errors.")
  )
  .add(
    HttpApiEndpoint.get("v1ListWebhookDeliveries", "/v1/webhooks/deliveries", {
      query: DeliveriesQuery,
      success: ok(
        Schema.Struct({ deliveries: Schema.Array(V1Delivery), limit: NonNegativeInt, offset: NonNegativeInt }),
        "V1DeliveriesList"
      ),
      error: API_ERRORS
    })
      .annotate(OpenApi.Summary, "Webhook deliveries (v1)")
      .annotate(OpenApi.Description, "The same log as v2's (v1 and v2 deliveries), newest first.")
  )
  .add(
    HttpApiEndpoint.post("v1SendWebhookTest", "/v1/webhooks/test", {
      success: ok(
        Schema.Struct({
          id: Schema.String,
          event_type: Schema.Literal("report.completed"),
          is_test: Schema.Literal(true),
          status: Schema.Literal("pending"),
          payload: Schema.Unknown
        }),
        "V1WebhookTest"
      ),
      error: API_ERRORS
    })
      .annotate(OpenApi.Summary, "Send a test event (v1)")
      .annotate(
        OpenApi.Description,
        "Paid and custom plans: a realistic `report.completed` event for a sample plate, signed and sent to the configured URL even while deliveries are disabled (400 without a URL). It appears in the deliveries log like any other."
      )
  )
  .annotate(OpenApi.Title, "v1 compatibility")
  .annotate(OpenApi.Description, "The previous version, kept available: same keys, allowances, RPM and webhook configuration as v2.")
{}
