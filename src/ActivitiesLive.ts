/**
 * Everything that runs operations' activities, with what they need (v1's event bodies among them):
 * shared by the API (its inline engine) and the worker, which imports this and not the HTTP
 * application.
 */
import { Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { Metering } from "./metering/Metering.js"
import { OperationActivities } from "./operations/Activities.js"
import { OperationsRepo } from "./operations/Repo.js"
import { V1EventBodiesLive } from "./v1/Events.js"
import { VehicleQuery } from "./vehicles/VehicleQuery.js"
import { WebhookDeliveries } from "./webhooks/Deliveries.js"
import { WebhooksRepo } from "./webhooks/Repo.js"

export const ActivitiesLive = OperationActivities.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(VehicleQuery.layer, WebhookDeliveries.layer)),
  Layer.provideMerge(Layer.mergeAll(OperationsRepo.layer, WebhooksRepo.layer)),
  Layer.provideMerge(Metering.layer),
  Layer.provideMerge(V1EventBodiesLive),
  Layer.provide(FetchHttpClient.layer)
)
