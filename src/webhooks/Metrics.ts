/**
 * Webhook deliveries as the people who run the service watch them: each attempt by outcome, and
 * the backlog (how many are pending, and how long the oldest has waited), read from the
 * database at each scrape.
 */
import { Clock, Effect, Layer, Metric } from "effect"
import { labelSets, onScrape, updateUnsafe } from "../platform/observability/Telemetry.js"
import { WebhooksRepo } from "./Repo.js"

const attempts = Metric.counter("vda_webhook_delivery_attempts", {
  description: "Webhook delivery attempts by outcome: delivered (2xx) or failed",
  incremental: true
})
const outcomeLabels = labelSets("outcome")

export const countAttempt = (outcome: "delivered" | "failed") => updateUnsafe(attempts, 1, outcomeLabels(outcome))

const pending = Metric.gauge("vda_webhook_deliveries_pending", { description: "Webhook deliveries not yet delivered or given up" })
const oldestAge = Metric.gauge("vda_webhook_oldest_pending_delivery_age_seconds", {
  description: "How long the oldest pending webhook delivery has waited (0 when none)"
})

/** Keeps the backlog gauges current at each scrape, for as long as the layer lives. */
export const DeliveryBacklogLive = Layer.effectDiscard(Effect.gen(function*() {
  const repo = yield* WebhooksRepo
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  yield* Effect.acquireRelease(
    Effect.sync(() =>
      onScrape(() =>
        // its age by the application's clock, which stamped the delivery
        run(Effect.map(Effect.zip(repo.pendingSummary, Clock.currentTimeMillis), ([summary, now]) => {
          updateUnsafe(pending, summary.pending)
          updateUnsafe(oldestAge, summary.oldest === null ? 0 : Math.max(0, now - summary.oldest.getTime()) / 1000)
        }))
      )
    ),
    (unregister) => Effect.sync(unregister)
  )
}))
