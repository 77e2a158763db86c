/**
 * The webhook endpoints' logic: the configuration (one per account and environment, created
 * disabled with a fresh secret on first use), the deliveries log, the test event and resends.
 */
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { FIRST_SERIES } from "../../workflows/shared.js"
import { accountKey, isPaidOrCustom, PaidPlanRequired, type Principal } from "../principal/Domain.js"
import { deliveryStartRequestOf, WorkflowEngine } from "../operations/WorkflowEngine.js"
import * as Batcher from "../platform/batching/Batcher.js"
import { AppConfig } from "../platform/config/Config.js"
import { randomBase62 } from "../platform/ids/Ids.js"
import type { Delivery, WebhookConfigUpdate } from "./Api.js"
import { WebhookDeliveries } from "./Deliveries.js"
import { type DeliveryRow, type StoredConfig, WebhooksRepo } from "./Repo.js"
import { checkWebhookUrl, HostResolver, UrlRejected } from "./UrlPolicy.js"

/** The change asked for breaks a rule of the configuration. */
export class InvalidWebhookConfig extends Data.TaggedError("InvalidWebhookConfig")<{ readonly reason: string }> {}

/** No delivery of this account and environment has that id (another account's is not revealed). */
export class DeliveryNotFound extends Data.TaggedError("DeliveryNotFound")<{ readonly id: string }> {}

/** The delivery is still pending: it cannot be resent while its attempt series runs. */
export class DeliveryInProgress extends Data.TaggedError("DeliveryInProgress")<{ readonly id: string }> {}

/** A test needs somewhere to go. */
export class WebhookNotReady extends Data.TaggedError("WebhookNotReady")<{ readonly reason: string }> {}

/** `whsec_` + 32 random base62 characters. */
export const generateSecret = () => `whsec_${randomBase62(32)}`

const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.id,
  event: row.eventType,
  apiVersion: row.apiVersion,
  status: row.status,
  attempts: row.attempts,
  responseStatus: row.responseStatus,
  nextAttemptAt: row.nextAttemptAt,
  createdAt: row.createdAt,
  payload: JSON.parse(row.body)
})

const make = Effect.gen(function*() {
  const repo = yield* WebhooksRepo
  const deliveries = yield* WebhookDeliveries
  const engine = yield* WorkflowEngine
  const config = yield* AppConfig
  const resolver = yield* HostResolver

  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  /** Starts the delivery of an event just recorded: its first attempt series. */
  const startRecorded = (principal: Principal, deliveryId: string) =>
    engine.startDelivery({ deliveryId, series: FIRST_SERIES, accountId: principal.accountId, environment: principal.environment })

  /** The configuration; concurrent reads of one account and environment share one. */
  const getConfig: (principal: Principal) => Effect.Effect<StoredConfig> = yield* Batcher.sharedReads({
    key: accountKey,
    read: (principal: Principal) => Effect.flatMap(now, (at) => repo.config(principal.accountId, principal.environment, generateSecret(), at))
  })

  /**
   * Omitted fields are kept; `url: null` removes the URL and disables; enabling needs a URL
   * (the one given or the one kept); `rotateSecret` replaces the secret. All or nothing.
   */
  const updateConfig = Effect.fnUntraced(function*(principal: Principal, update: WebhookConfigUpdate) {
    // checked before the row is locked: resolving a name may take a while
    if (typeof update.url === "string") {
      yield* checkWebhookUrl(update.url, config.webhookAllowPrivateNetworks).pipe(
        Effect.provideService(HostResolver, resolver),
        Effect.mapError((rejected: UrlRejected) => new InvalidWebhookConfig({ reason: rejected.reason }))
      )
    }
    const at = yield* now
    return yield* repo.updateConfig(principal.accountId, principal.environment, generateSecret(), at, (current) => {
      const url = update.url === undefined ? current.url : update.url
      const enabled = url === null ? false : update.enabled ?? current.enabled
      if (update.enabled === true && url === null) {
        return Effect.fail(new InvalidWebhookConfig({ reason: "enabled: true requires a url" }))
      }
      return Effect.succeed({ url, enabled, secret: update.rotateSecret === true ? generateSecret() : current.secret })
    })
  })

  const listDeliveries = (principal: Principal, limit: number, offset: number) =>
    Effect.map(repo.list(principal.accountId, principal.environment, limit, offset), (rows) => ({
      deliveries: rows.map(toDelivery),
      limit,
      offset
    }))

  /** Records a `webhook.test` event and starts its delivery, like any other event's. */
  const sendTest = Effect.fnUntraced(function*(principal: Principal) {
    const webhook = yield* getConfig(principal)
    if (webhook.url === null) {
      return yield* new WebhookNotReady({ reason: "No webhook URL is configured: set one with PATCH /v2/webhooks/config" })
    }
    if (!webhook.enabled) {
      return yield* new WebhookNotReady({ reason: "The webhook is disabled: enable it with PATCH /v2/webhooks/config" })
    }
    const id = yield* deliveries.recordTest(principal.accountId, principal.environment)
    yield* startRecorded(principal, id)
    return { id, status: "pending" as const }
  })

  /**
   * v1's test (paid and custom plans): a sample `report.completed`, sent to the configured URL
   * even while deliveries are disabled. The delivery as listed, payload included.
   */
  const sendV1Test = Effect.fnUntraced(function*(principal: Principal) {
    if (!isPaidOrCustom(principal.entitlements.plan)) return yield* new PaidPlanRequired({ options: ["test events"] })
    const webhook = yield* getConfig(principal)
    if (webhook.url === null) {
      return yield* new WebhookNotReady({ reason: "No webhook URL is configured: set one with PATCH /v1/webhooks/config" })
    }
    const id = yield* deliveries.recordV1Test(principal.accountId, principal.environment)
    const recorded = toDelivery(Option.getOrThrow(yield* repo.findDelivery(id)))
    yield* startRecorded(principal, id)
    return recorded
  })

  /**
   * Sends a failed or processed delivery again: a new attempt series of the same event (same
   * id, same body) through the delivery workflow, its attempts counted from one. Its attempts
   * follow the webhook's configuration as any attempt does. The delivery as listed, pending.
   */
  const resend = Effect.fnUntraced(function*(principal: Principal, deliveryId: string) {
    const at = yield* now
    const resent = yield* repo.resend(deliveryId, principal.accountId, principal.environment, at)
    if (Option.isSome(resent)) {
      yield* engine.startDelivery(deliveryStartRequestOf(resent.value))
      return toDelivery(resent.value)
    }
    // refused: this account's delivery was pending at that moment, or there is none of its own
    const own = Option.filter(
      yield* repo.findDelivery(deliveryId),
      (row) => row.accountId === principal.accountId && row.environment === principal.environment
    )
    return yield* Option.isSome(own) ? new DeliveryInProgress({ id: deliveryId }) : new DeliveryNotFound({ id: deliveryId })
  })

  return { getConfig, updateConfig, listDeliveries, sendTest, sendV1Test, resend }
})

export class Webhooks extends Context.Service<Webhooks, Effect.Success<typeof make>>()("vda/Webhooks", { make }) {
  static readonly layer = Layer.effect(Webhooks, make).pipe(Layer.provide(WebhookDeliveries.layer))
}
