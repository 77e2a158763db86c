/**
 * The API server, for `npm start` (main.ts) and for embedders (`vehicle-data-api/server`):
 * database (embedded unless DATABASE_URL), migrations, then the production and sandbox listeners
 * serving the same application. SIGTERM lets in-flight requests finish, then closes the listeners,
 * the pool and the embedded PostgreSQL. With API_PROCESSES=N this process keeps the database and
 * runs N API processes on it (platform/ApiProcesses).
 */
import { NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer, Redacted } from "effect"
import { Accounts } from "./accounts/Accounts.js"
import { createDemoAccount, type DemoAccount, describeDemoAccount } from "./accounts/DemoAccount.js"
import { Catalog } from "./catalog/Catalog.js"
import { ModuleRegistry } from "./modules/Registry.js"
import { apiProcessIndex, isApiWorker, reportListening, startApiProcesses } from "./platform/process/ApiProcesses.js"
import { serveAdmin } from "./platform/observability/AdminServer.js"
import { startupBanner } from "./platform/config/ConfigBanner.js"
import { LoggingLive } from "./platform/observability/Logging.js"
import { listenError, runMain } from "./platform/process/Startup.js"
import { announceTemporalSecrets, resolveTemporalSecrets, TemporalSecrets } from "./platform/temporal/TemporalSecrets.js"
import { TelemetryLive } from "./platform/observability/Telemetry.js"
import { serveListener } from "./Listeners.js"
import { VehicleStore } from "./vehicles/Store.js"
import { HttpStackLive } from "./Http.js"
import { AppConfig } from "./platform/config/Config.js"
import { DatabaseLocation } from "./platform/db/Database.js"
import { DatabaseLive } from "./DatabaseLive.js"
import * as Imports from "./cli/Imports.js"
import { demoDataFile } from "./platform/process/Paths.js"
import type { Environment } from "./platform/http/RequestContext.js"

/**
 * First run on an empty embedded database: demo data, then the demo account (which marks the
 * first run as done). Once the listeners are bound, so a port in use stops the start before the
 * demo keys are made (they are shown once); no key exists yet that a request could use.
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

const ListenersLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  // every listener is bound before any is announced: a port in use stops the start first
  const listeners: ReadonlyArray<readonly [Environment, string, number]> = [
    ["production", "PORT", config.port],
    ["sandbox", "SANDBOX_PORT", config.sandboxPort]
  ]
  const urls = yield* Effect.forEach(listeners, ([environment, setting, port]) =>
    serveListener(environment, port).pipe(Effect.mapError((error) => listenError(setting, config.host, port, error.cause))))
  const { adminHost, adminPort } = config.telemetry
  const wantedAdminPort = adminPort === 0 ? 0 : adminPort + apiProcessIndex()
  const admin = yield* serveAdmin(adminHost, wantedAdminPort).pipe(
    Effect.mapError((error) => listenError("ADMIN_PORT", adminHost, wantedAdminPort, error))
  )
  const demo = yield* firstRun
  for (const [index, [environment]] of listeners.entries()) yield* Effect.logInfo(`${environment} API listening on ${urls[index]}`)
  yield* Effect.logInfo(`metrics on http://${admin.host}:${admin.port}/metrics`)
  yield* showDemo(demo, urls)
  yield* reportListening(urls)
}))

/** The API in this process (a single process, or one of API_PROCESSES). */
const ApiLive = ListenersLive.pipe(
  Layer.provide(HttpStackLive),
  Layer.provide(NodeServices.layer),
  Layer.provide(TelemetryLive({ serviceName: "vehicle-data-api" })),
  Layer.provide(Accounts.layer),
  Layer.provide(DatabaseLive("server")),
  Layer.provide(AppConfig.layer)
)

/** The primary of API_PROCESSES: the database and the first run, then the API processes on it. */
const PrimaryLive = Layer.effectDiscard(Effect.gen(function*() {
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
  Layer.provide(Layer.mergeAll(Accounts.layer, Catalog.layer, VehicleStore.layer, ModuleRegistry.layer, NodeServices.layer)),
  Layer.provide(DatabaseLive("server")),
  Layer.provide(AppConfig.layer)
)

/**
 * The effective configuration, secrets masked, once per start (not again by each API process);
 * with the Temporal engine, its secrets too, so a missing one stops the start before anything else.
 */
const BannerLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  if (isApiWorker) return
  yield* Effect.annotateLogs(Effect.logInfo("configuration"), startupBanner(config))
  if (config.workflowEngine === "temporal") {
    yield* announceTemporalSecrets.pipe(Effect.provideServiceEffect(TemporalSecrets, resolveTemporalSecrets("api")))
  }
}))

/**
 * The API as `npm start` runs it, configured from the environment (the settings of the operations
 * guide): launching it serves until interrupted. Nothing runs until it is launched.
 */
export const ServerLive = Layer.unwrap(Effect.map(AppConfig, (config) =>
  config.apiProcesses > 1 && !isApiWorker ? PrimaryLive : ApiLive
)).pipe(Layer.provide(BannerLive), Layer.provide(AppConfig.layer))

/**
 * Runs the API in this process as `npm start` does: its logs, a start-up failure told in one line
 * and exit code 1, SIGTERM and SIGINT draining in-flight requests first.
 */
export const runServer = (): void =>
  Layer.launch(ServerLive).pipe(
    Effect.provide(LoggingLive.pipe(Layer.provide(AppConfig.layer))),
    runMain
  )
