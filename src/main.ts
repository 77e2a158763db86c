/**
 * Starts the API: database (embedded unless DATABASE_URL), migrations, then the production and
 * sandbox listeners serving the same application. SIGTERM lets in-flight requests finish, then
 * closes the listeners, the pool and the embedded PostgreSQL. With API_PROCESSES=N this process
 * keeps the database and runs N API processes on it (platform/ApiProcesses).
 */
import type { Server } from "node:http"
import { HttpApiBuilder, HttpMiddleware, HttpServer, HttpServerRequest } from "@effect/platform"
import { NodeContext, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Clock, Console, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { Accounts } from "./accounts/Accounts.js"
import { createDemoAccount, type DemoAccount, describeDemoAccount } from "./accounts/DemoAccount.js"
import { Catalog } from "./catalog/Catalog.js"
import { ModuleRegistry } from "./modules/Registry.js"
import { isApiWorker, reportListening, startApiProcesses } from "./platform/ApiProcesses.js"
import { VehicleStore } from "./vehicles/Store.js"
import { forListener, HttpStackLive } from "./Http.js"
import { Lane } from "./lane/Lane.js"
import { AppConfig } from "./platform/Config.js"
import { DatabaseLocation, makeDatabaseLive } from "./platform/Database.js"
import { createLimitedServer } from "./platform/HttpServerLimits.js"
import * as Imports from "./cli/Imports.js"
import { demoDataFile } from "./platform/Paths.js"
import type { Environment } from "./platform/RequestContext.js"

const addressOf = (address: HttpServer.Address) =>
  address._tag === "UnixAddress"
    ? address.path
    : `http://${address.hostname === "0.0.0.0" ? "localhost" : address.hostname}:${address.port}`

/**
 * `server.close()` waits for every open connection, and a keep-alive connection that was busy
 * when it was called would then linger until its idle timeout. Once closing, close connections
 * as soon as they are idle, and cut whatever is left after the deadline.
 */
const drainOnClose = (server: Server, drainMs: number) => {
  const close = server.close.bind(server)
  server.close = (callback) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50)
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs)
    return close((error) => {
      clearInterval(idle)
      clearTimeout(deadline)
      callback?.(error)
    })
  }
  return server
}

/** One debug line per request (`LOG_LEVEL=debug`): method, path, status, duration. */
const accessLog = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeMillis
    return yield* app.pipe(
      Effect.tap((response) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.logDebug(`${request.method} ${request.url.split("?")[0]} ${response.status} ${now - started}ms`)))
    )
  }))

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
  const app = yield* HttpApiBuilder.httpApp
  const lane = yield* Lane
  const demo = yield* firstRun

  const listeners: ReadonlyArray<readonly [Environment, number]> = [
    ["production", config.port],
    ["sandbox", config.sandboxPort]
  ]
  const urls: Array<string> = []
  for (const [environment, port] of listeners) {
    const nodeServer = drainOnClose(createLimitedServer(config.http), config.shutdownDrainMs)
    const server = yield* NodeHttpServer.make(() => nodeServer, { port, host: config.host })
    // the access log costs two clock reads and a step per request: only when it is printed
    const handler = yield* (LogLevel.lessThanEqual(config.logLevel, LogLevel.Debug)
      ? NodeHttpServer.makeHandler(app, accessLog)
      : NodeHttpServer.makeHandler(app)).pipe(forListener(environment))
    const listener = yield* lane.front(environment, handler)
    nodeServer.on("request", listener)
    yield* Effect.addFinalizer(() => Effect.sync(() => nodeServer.off("request", listener)))
    urls.push(addressOf(server.address))
    yield* Effect.logInfo(`${environment} API listening on ${addressOf(server.address)}`)
  }
  yield* showDemo(demo, urls)
  yield* reportListening(urls)
}))

/** The API in this process (a single process, or one of API_PROCESSES). */
const ApiLive = ListenersLive.pipe(
  Layer.provide(HttpStackLive),
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

const MainLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  config.apiProcesses > 1 && !isApiWorker ? PrimaryLive : ApiLive
)).pipe(Layer.provide(AppConfig.Default))

const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => Logger.minimumLogLevel(config.logLevel))
).pipe(Layer.provide(AppConfig.Default))

Layer.launch(MainLive).pipe(
  Effect.provide(LoggingLive),
  NodeRuntime.runMain
)
