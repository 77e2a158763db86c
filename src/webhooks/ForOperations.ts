/**
 * What the webhooks give operations: the event of an operation that became final, and the
 * deliveries the engines run.
 */
import { Effect, Layer } from "effect"
import { DeliveryRuns } from "../operations/DeliveryRuns.js"
import { OperationEvents } from "../operations/OperationEvents.js"
import { WebhookDeliveries } from "./Deliveries.js"
import { WebhooksRepo } from "./Repo.js"

const OperationEventsLive = Layer.effect(
  OperationEvents,
  Effect.map(WebhookDeliveries, (deliveries) => OperationEvents.of({ finalized: deliveries.emitForOperation }))
)

const DeliveryRunsLive = Layer.effect(
  DeliveryRuns,
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const deliveries = yield* WebhookDeliveries
    return DeliveryRuns.of({
      find: repo.findDelivery,
      attempt: deliveries.attempt,
      settle: deliveries.settle,
      markStarted: repo.markStarted,
      claim: repo.claim,
      claimable: repo.claimable,
      renewClaims: repo.renewClaims,
      releaseClaims: repo.releaseClaims,
      unstarted: (unstartedBefore) => repo.pending({ unstartedBefore }),
      overdue: repo.overdue
    })
  })
)

/** Needs the `WebhookDeliveries` and the `WebhooksRepo`. */
export const WebhooksForOperationsLive = Layer.mergeAll(OperationEventsLive, DeliveryRunsLive)
