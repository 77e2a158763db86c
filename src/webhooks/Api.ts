/**
 * Contract of the webhook endpoints: configuration, deliveries log and test event.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { API_ERRORS } from "../platform/http/Errors.js"
import { ModulesOperation } from "../operations/Api.js"
import { DateTimeUtc, NonNegativeInt } from "../platform/contract/Schemas.js"
import { VehicleOperation } from "../vehicles/SearchOperation.js"

export const WebhookConfig = Schema.Struct({
  url: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  secret: Schema.String
}).annotate({ identifier: "WebhookConfig" })
export type WebhookConfig = typeof WebhookConfig.Type

export const WebhookConfigUpdate = Schema.Struct({
  url: Schema.optional(Schema.NullOr(Schema.String)),
  enabled: Schema.optional(Schema.Boolean),
  rotateSecret: Schema.optional(Schema.Boolean)
}).annotate({
  identifier: "WebhookConfigUpdate",
  description: "Every field optional; omitted ones are kept. `url: null` removes the URL and disables the webhook."
})
export type WebhookConfigUpdate = typeof WebhookConfigUpdate.Type

const v2Event = <Type extends Schema.Top, Data extends Schema.Top>(type: Type, data: Data) =>
  Schema.Struct({ id: Schema.String, type, apiVersion: Schema.Literal("v2"), createdAt: DateTimeUtc, data })

/** The events of a modules operation that became final, with the Operation as polled. */
export const ModulesEvent = v2Event(Schema.Literals(["modules.completed", "modules.failed"]), ModulesOperation)
  .annotate({ identifier: "ModulesEvent" })

/** The events of a vehicle search that became final, with the Operation as polled. */
export const VehicleEvent = v2Event(Schema.Literals(["vehicle.completed", "vehicle.failed"]), VehicleOperation)
  .annotate({ identifier: "VehicleEvent" })

export const TestEvent = v2Event(Schema.Literal("webhook.test"), Schema.Struct({ message: Schema.String }))
  .annotate({ identifier: "TestEvent" })

export const WebhookEvent = Schema.Union([ModulesEvent, VehicleEvent, TestEvent])
  .annotate({ identifier: "WebhookEvent", description: "`data` is the Operation as polled, or `{message}` for webhook.test" })
export type WebhookEvent = typeof WebhookEvent.Type
export type EventType = WebhookEvent["type"]

export const Delivery = Schema.Struct({
  id: Schema.String,
  event: Schema.String,
  apiVersion: Schema.Literals(["v1", "v2"]),
  status: Schema.Literals(["pending", "processed", "failed"]),
  attempts: NonNegativeInt,
  responseStatus: Schema.NullOr(Schema.Number),
  nextAttemptAt: DateTimeUtc,
  createdAt: DateTimeUtc,
  payload: Schema.Unknown.annotate({ description: "The event as sent: a WebhookEvent for v2, the unchanged v1 event for v1" })
}).annotate({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const DeliveriesList = Schema.Struct({
  deliveries: Schema.Array(Delivery),
  limit: NonNegativeInt,
  offset: NonNegativeInt
}).annotate({ identifier: "DeliveriesList" })

/** A query-string integer in plain decimal digits (no `1e3`, no `0x10`, no `2.0`), within bounds. */
const boundedInt = (name: string, min: number, max: number) =>
  Schema.String.check(Schema.isPattern(/^-?\d{1,9}$/, { message: `${name} must be an integer` })).pipe(
    Schema.decodeTo(Schema.NumberFromString),
    Schema.check(Schema.isBetween({ minimum: min, maximum: max }, { message: `${name} must be between ${min} and ${max}` }))
  )

export const DeliveriesQuery = Schema.Struct({
  limit: Schema.optional(boundedInt("limit", 1, 100)),
  offset: Schema.optional(boundedInt("offset", 0, 10_000))
})

export const TestDelivery = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("pending")
}).annotate({ identifier: "TestDelivery" })

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("getWebhookConfig", "/v2/webhooks/config", { success: WebhookConfig, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Webhook configuration")
      .annotate(OpenApi.Description, "URL, activation and signing secret of this environment (shared with v1).")
  )
  .add(
    HttpApiEndpoint.patch("updateWebhookConfig", "/v2/webhooks/config", { payload: WebhookConfigUpdate, success: WebhookConfig, error: API_ERRORS })
      // a field the update does not know (`secret`, say) is refused rather than ignored
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotate(OpenApi.Summary, "Change the webhook configuration")
      .annotate(
        OpenApi.Description,
        "The URL must be HTTPS, at most 2048 characters and publicly reachable; enabling requires a URL; `rotateSecret: true` signs every later delivery, retries included, with a new secret."
      )
  )
  .add(
    HttpApiEndpoint.get("listWebhookDeliveries", "/v2/webhooks/deliveries", { query: DeliveriesQuery, success: DeliveriesList, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Deliveries log")
      .annotate(OpenApi.Description, "Recent v1 and v2 deliveries of this environment, newest first (`limit` 1–100, default 25; `offset` 0–10000).")
  )
  .add(
    HttpApiEndpoint.post("sendWebhookTest", "/v2/webhooks/test", { success: TestDelivery.pipe(HttpApiSchema.status(202)), error: API_ERRORS })
      .annotate(OpenApi.Summary, "Send a test event")
      .annotate(OpenApi.Description, "Sends a `webhook.test` event through the delivery path. Needs a URL and an enabled webhook (else 400).")
  )
  .annotate(OpenApi.Title, "Webhooks")
{}
