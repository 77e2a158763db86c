/**
 * Everything that runs operations' activities, with what they need (v1's event bodies among them):
 * shared by the API (its inline engine) and the worker, which imports this and not the HTTP
 * application.
 */
import { Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { Metering } from "./metering/Metering.js"
import { ModuleRegistry } from "./modules/Registry.js"
import { ModuleSource, ModuleSources } from "./modules/Sources.js"
import { ModuleUpstream } from "./modules/Upstream.js"
import { OperationActivities } from "./operations/Activities.js"
import { OperationsRepo } from "./operations/Repo.js"
import { SandboxModuleSource, SandboxVehicleSource } from "./sandbox/Sources.js"
import { V1EventBodiesLive } from "./v1/Events.js"
import { VehicleSource, VehicleSources } from "./vehicles/Sources.js"
import { VehicleStore } from "./vehicles/Store.js"
import { VehicleUpstream } from "./vehicles/Upstream.js"
import { VehicleQuery } from "./vehicles/VehicleQuery.js"
import { WebhookDeliveries } from "./webhooks/Deliveries.js"
import { WebhooksForOperationsLive } from "./webhooks/ForOperations.js"
import { WebhooksRepo } from "./webhooks/Repo.js"
import { WebhookSender } from "./webhooks/Sender.js"

/** Each environment's data sources: production's registry and upstreams, the sandbox's generators. */
export const SourcesLive = Layer.mergeAll(
  VehicleSources.layer({ production: VehicleSource.Live, sandbox: SandboxVehicleSource }),
  ModuleSources.layer({ production: ModuleSource.Live, sandbox: SandboxModuleSource })
).pipe(
  Layer.provide([VehicleStore.layer, VehicleUpstream.layer, ModuleRegistry.layer, ModuleUpstream.layer])
)

export const ActivitiesLive = OperationActivities.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(VehicleQuery.layer, WebhooksForOperationsLive)),
  Layer.provideMerge(WebhookDeliveries.layer),
  Layer.provideMerge(SourcesLive),
  Layer.provideMerge(Layer.mergeAll(OperationsRepo.layer, WebhooksRepo.layer, WebhookSender.layer)),
  Layer.provideMerge(Metering.layer),
  Layer.provideMerge(V1EventBodiesLive),
  Layer.provide(FetchHttpClient.layer)
)
