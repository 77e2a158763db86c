/**
 * Starts the API: database (embedded unless DATABASE_URL), migrations, then the production and
 * sandbox listeners serving the same application. SIGTERM lets in-flight requests finish, then
 * closes the listeners, the pool and the embedded PostgreSQL. With API_PROCESSES=N this process
 * keeps the database and runs N API processes on it (platform/ApiProcesses).
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Redacted } from "effect"
import { Accounts } from "./accounts/Accounts.js"
import { createDemoAccount, type DemoAccount, describeDemoAccount } from "./accounts/DemoAccount.js"
import { Catalog } from "./catalog/Catalog.js"
import { ModuleRegistry } from "./modules/Registry.js"
import { apiProcessIndex, isApiWorker, reportListening, startApiProcesses } from "./platform/ApiProcesses.js"
import { serveAdmin } from "./platform/AdminServer.js"
import { describeConfig } from "./platform/ConfigBanner.js"
import { LoggingLive } from "./platform/Logging.js"
import { TelemetryLive } from "./platform/Telemetry.js"
import { serveListener } from "./Listeners.js"
import { VehicleStore } from "./vehicles/Store.js"
import { HttpStackLive } from "./Http.js"
import { AppConfig } from "./platform/Config.js"
import { DatabaseLocation, makeDatabaseLive } from "./platform/Database.js"
import * as Imports from "./cli/Imports.js"
import { demoDataFile } from "./platform/Paths.js"
import type { Environment } from "./platform/RequestContext.js"

/**
 * First run on an empty embedded database: demo data, then the demo account (which marks the
 * first run as done). Before any listener opens, so no request ever sees a half-set-up service.
 */
const firstRun = Effect.gen(function*() {
  const location = yield* DatabaseLocation
  if (!location.embedded || (yield* (yield* Accounts).count) > 0) return undefined
  const catalog = yield* Imports.importCatalog(demoDataFile("catalog.jsonl"))
  const registry = yield* Imports.importRegistry(demoDataFile("registry.jsonl"))
  yield* Effect.logInfo(`demo data imported: ${catalog} catalog versions, ${Imports.describeRegistryCounts(registry)}`)
  return yield* createDemoAccount
})

const showDemo = (demo: DemoAccount | undefined, urls: ReadonlyArray<string>) =>
  demo === undefined ? Effect.void : Console.log(describeDemoAccount(demo, urls[0]!, urls[1]!))

const ListenersLive = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const demo = yield* firstRun

  const listeners: ReadonlyArray<readonly [Environment, number]> = [
    ["production", config.port],
    ["sandbox", config.sandboxPort]
  ]
  const urls: Array<string> = []
  for (const [environment, port] of listeners) {
    const url = yield* serveListener(environment, port)
    urls.push(url)
    yield* Effect.logInfo(`${environment} API listening on ${url}`)
  }
  const { adminHost, adminPort } = config.telemetry
  const admin = yield* serveAdmin(adminHost, adminPort === 0 ? 0 : adminPort + apiProcessIndex())
  yield* Effect.logInfo(`metrics on http://${admin.host}:${admin.port}/metrics`)
  yield* showDemo(demo, urls)
  yield* reportListening(urls)
}))

/** The API in this process (a single process, or one of API_PROCESSES). */
const ApiLive = ListenersLive.pipe(
  Layer.provide(HttpStackLive),
  Layer.provide(TelemetryLive({ serviceName: "vehicle-data-api" })),
  Layer.provide(Accounts.Default),
  Layer.provide(makeDatabaseLive("server")),
  Layer.provide(AppConfig.Default)
)

/** The primary of API_PROCESSES: the database and the first run, then the API processes on it. */
const PrimaryLive = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const location = yield* DatabaseLocation
  const demo = yield* firstRun
  const urls = yield* startApiProcesses(
    config.apiProcesses,
    { DATABASE_URL: Redacted.value(location.url) },
    config.shutdownDrainMs + 5_000
  )
  yield* Effect.logInfo(`${config.apiProcesses} API processes listening`)
  yield* showDemo(demo, urls)
})).pipe(
  Layer.provide(Layer.mergeAll(Accounts.Default, Catalog.Default, VehicleStore.Default, ModuleRegistry.Default, NodeContext.layer)),
  Layer.provide(makeDatabaseLive("server")),
  Layer.provide(AppConfig.Default)
)

/** The effective configuration, secrets masked, once per start (not again by each API process). */
const BannerLive = Layer.effectDiscard(Effect.flatMap(AppConfig, (config) =>
  isApiWorker ? Effect.void : Effect.annotateLogs(Effect.logInfo("configuration"), describeConfig(config))))

const MainLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  config.apiProcesses > 1 && !isApiWorker ? PrimaryLive : ApiLive
)).pipe(Layer.provide(BannerLive), Layer.provide(AppConfig.Default))

Layer.launch(MainLive).pipe(
  Effect.provide(LoggingLive.pipe(Layer.provide(AppConfig.Default))),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
