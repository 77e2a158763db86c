/**
 * A public listener (production or sandbox) as main serves it and as tests boot it in-process:
 * Node's limits, a graceful drain, the HttpApi application, and the observation of every request
 * (metrics, access log, server span) in front of it.
 */
import type { Server } from "node:http"
import { HttpApiBuilder, type HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import { ConsoleApp } from "./console/Http.js"
import { consoleRouteOf, isConsolePath } from "./console/Routes.js"
import { forListener, routeOfUrl } from "./Http.js"
import { AppConfig } from "./platform/Config.js"
import { createLimitedServer } from "./platform/HttpServerLimits.js"
import { makeObserver } from "./platform/HttpObservation.js"
import { makeAccessLog } from "./platform/Logging.js"
import type { Environment } from "./platform/RequestContext.js"
import { RequestTracer } from "./platform/Telemetry.js"

export const addressOf = (address: HttpServer.Address) =>
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

/** Serves the application for `environment` on `port` until the scope closes; answers its URL. */
export const serveListener = (environment: Environment, port: number) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const app = yield* HttpApiBuilder.httpApp
    const observe = makeObserver({
      environment,
      routeOf: (url) => (isConsolePath(url) ? consoleRouteOf(url) : routeOfUrl(url)),
      tracer: yield* RequestTracer,
      accessLog: makeAccessLog(config.logFormat, config.logLevel, config.accessLog)
    })
    const nodeServer = drainOnClose(createLimitedServer(config.http), config.shutdownDrainMs)
    const server = yield* NodeHttpServer.make(() => nodeServer, { port, host: config.host })
    const handler = yield* NodeHttpServer.makeHandler(app).pipe(forListener(environment))
    const console = yield* NodeHttpServer.makeHandler((yield* ConsoleApp).app).pipe(forListener(environment))
    const listener = observe((request, response) => (isConsolePath(request.url) ? console : handler)(request, response))
    nodeServer.on("request", listener)
    yield* Effect.addFinalizer(() => Effect.sync(() => nodeServer.off("request", listener)))
    return addressOf(server.address)
  })
