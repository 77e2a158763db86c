/**
 * A delivery attempt as the delivery workflow makes it, on the recording sender
 * (`WebhookSender.Test`): what would be sent (the stored body, signed with the current secret,
 * with the event's headers), and the attempt's outcome from the answer: a 2xx settles it
 * `processed`, anything else leaves it pending and retryable.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { V1EventBodiesLive } from "../../src/v1/Events.js"
import { WebhookDeliveries } from "../../src/webhooks/Deliveries.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import { SentWebhooks, WebhookSender } from "../../src/webhooks/Sender.js"
import { parseWebhookEvent } from "../../src/receiver/index.js"
import { verifyWebhookSignature } from "../../src/webhooks/verify.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"

const SECRET = "whsec_attempts"

/** The endpoint answers 503 to the attempts on a URL ending in /down, 204 to the rest. */
const Services = Layer.mergeAll(WebhookDeliveries.layer, WebhooksRepo.layer, Accounts.layer).pipe(
  Layer.provideMerge(WebhookSender.Test((outgoing) => ({ _tag: "Answered", status: outgoing.url.endsWith("/down") ? 503 : 204 }))),
  Layer.provide([OperationsRepo.layer, V1EventBodiesLive]),
  Layer.provideMerge(freshDatabaseLayer(2)),
  Layer.provideMerge(testConfig())
)

/** A test event of a new account whose webhook points at `url`; its delivery id. */
const testEventTo = (url: string) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ owner: "T", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
    yield* (yield* WebhooksRepo).updateConfig(account.id, "production", SECRET, new Date(), (current) =>
      Effect.succeed({ ...current, url, enabled: true, secret: SECRET }))
    return yield* (yield* WebhookDeliveries).recordTest(account.id, "production")
  })

const deliveryRow = (id: string) => Effect.flatMap(WebhooksRepo, (repo) => repo.findDelivery(id)).pipe(Effect.map(Option.getOrThrow))

layer(Services, { excludeTestServices: true })("a delivery attempt", (it) => {
  it.effect("sends the stored body once, signed with the current secret and labelled; a 2xx settles it", () =>
    Effect.gen(function*() {
      const deliveryId = yield* testEventTo("https://hooks.example.com/vda")
      const sent = yield* SentWebhooks
      const before = sent.all.length
      const status = yield* (yield* WebhookDeliveries).attempt({ deliveryId, attempt: 1, policy: DELIVERY_RETRY })
      expect(status).toBe("processed")
      expect(sent.all.length).toBe(before + 1)
      const outgoing = sent.all.at(-1)!
      const row = yield* deliveryRow(deliveryId)
      expect(outgoing.url).toBe("https://hooks.example.com/vda")
      expect(outgoing.body).toBe(row.body)
      expect(outgoing.headers).toMatchObject({
        "x-service-event": "v2.webhook.test",
        "x-service-delivery": deliveryId,
        "user-agent": "vehicle-data-api-webhooks"
      })
      expect(verifyWebhookSignature({
        secret: SECRET,
        rawBody: outgoing.body,
        signature: outgoing.headers["x-service-signature"],
        timestamp: outgoing.headers["x-service-timestamp"]
      })).toBe(true)
      expect(parseWebhookEvent(outgoing.body, outgoing.headers, SECRET)).toMatchObject({
        event: "v2.webhook.test",
        eventId: `evt_${deliveryId}`,
        payload: { type: "webhook.test", data: JSON.parse(outgoing.body).data }
      })
      expect(row).toMatchObject({ status: "processed", attempts: 1, responseStatus: 204 })
    }))

  it.effect("an answer outside 2xx leaves it pending, with the status, and fails retryable", () =>
    Effect.gen(function*() {
      const deliveryId = yield* testEventTo("https://hooks.example.com/down")
      const failure = yield* Effect.flip((yield* WebhookDeliveries).attempt({ deliveryId, attempt: 1, policy: DELIVERY_RETRY }))
      expect(failure).toMatchObject({ _tag: "DeliveryFailed", message: "the endpoint answered 503", retryable: true })
      expect(yield* deliveryRow(deliveryId)).toMatchObject({ status: "pending", attempts: 1, responseStatus: 503 })
    }))
})
