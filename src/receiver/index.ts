/**
 * `vehicle-data-api/webhooks`: what a webhook receiver needs. `parseWebhookEvent` checks a
 * delivery's signature and time and decodes its event; `verifyWebhookSignature` only checks;
 * `signWebhook` signs as the service does (for a receiver's own tests). Nothing of the server
 * is loaded with it.
 */
export type { EventType, WebhookEvent } from "../webhooks/Api.js"
export type { V1Event, V1EventType } from "../v1/Api.js"
export { signWebhook, verifyWebhookSignature, type VerifyWebhookOptions, WEBHOOK_HEADERS } from "../webhooks/verify.js"
export type { WebhookHeaders } from "./Headers.js"
export {
  parseWebhookEvent,
  parseWebhookEventEffect,
  type ParseWebhookEventOptions,
  type ReceivedWebhookEvent,
  WebhookEventError,
  type WebhookEventErrorReason
} from "./Parse.js"
