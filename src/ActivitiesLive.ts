/**
 * Everything that runs operations' activities, with what they need (v1's event bodies among them):
 * shared by the API (its inline engine) and the worker, which imports this and not the HTTP
 * application. `ActivitiesTest` is the same with production's sources and the webhook sender
 * canned, for in-process tests.
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

/** Each environment's data sources: production's as given, the sandbox's generators. */
const sourcesWith = <EV, RV, EM, RM>(production: {
  readonly vehicles: Layer.Layer<VehicleSource, EV, RV>
  readonly modules: Layer.Layer<ModuleSource, EM, RM>
}) =>
  Layer.mergeAll(
    VehicleSources.layer({ production: production.vehicles, sandbox: SandboxVehicleSource }),
    ModuleSources.layer({ production: production.modules, sandbox: SandboxModuleSource })
  )

/** Production's registry and upstreams, the sandbox's generators. */
export const SourcesLive = sourcesWith({ vehicles: VehicleSource.Live, modules: ModuleSource.Live }).pipe(
  Layer.provide([VehicleStore.layer, VehicleUpstream.layer, ModuleRegistry.layer, ModuleUpstream.layer])
)

const activitiesWith = <ES, RS, W extends WebhookSender, EW, RW>(
  sources: Layer.Layer<VehicleSources | ModuleSources, ES, RS>,
  sender: Layer.Layer<W, EW, RW>
) =>
  OperationActivities.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(VehicleQuery.layer, WebhooksForOperationsLive)),
    Layer.provideMerge(WebhookDeliveries.layer),
    Layer.provideMerge(sources),
    Layer.provideMerge(Layer.mergeAll(OperationsRepo.layer, WebhooksRepo.layer, sender)),
    Layer.provideMerge(Metering.layer),
    Layer.provideMerge(V1EventBodiesLive)
  )

export const ActivitiesLive = activitiesWith(SourcesLive, WebhookSender.layer).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * The activities on production's canned vehicles and modules (`VehicleSource.Test`,
 * `ModuleSource.Test`) and the recording sender (`WebhookSender.Test`, with its `SentWebhooks`);
 * the sandbox keeps its generators, and the database is the one given.
 */
export const ActivitiesTest = (canned: {
  readonly vehicles?: Parameters<typeof VehicleSource.Test>[0]
  readonly modules?: Parameters<typeof ModuleSource.Test>[0]
  readonly webhooks?: Parameters<typeof WebhookSender.Test>[0]
}) =>
  activitiesWith(
    sourcesWith({ vehicles: VehicleSource.Test(canned.vehicles ?? {}), modules: ModuleSource.Test(canned.modules ?? {}) }),
    WebhookSender.Test(canned.webhooks)
  )
