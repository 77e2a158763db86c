/**
 * A public listener (production or sandbox) as main serves it and as tests boot it in-process:
 * Node's limits, a graceful drain, the HttpApi application, and the observation of every request
 * (metrics, access log, server span) in front of it.
 */
import type { Server } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Scope } from "effect"
import { ConsoleApp } from "./console/Http.js"
import { consoleRouteOf, isConsolePath } from "./console/Routes.js"
import { apiProgram, forApiListener, forListener, routeOfUrl } from "./Http.js"
import { AppConfig } from "./platform/config/Config.js"
import { createLimitedServer } from "./platform/http/HttpServerLimits.js"
import { makeObserver } from "./platform/observability/HttpObservation.js"
import { makeAccessLog } from "./platform/observability/Logging.js"
import type { Environment } from "./platform/http/RequestContext.js"
import { RequestTracer } from "./platform/observability/Telemetry.js"

/** A listening server's URL; one on every interface is reached as `localhost`. */
export const addressOf = (server: Server) => {
  const address = server.address()
  if (address === null || typeof address === "string") return String(address)
  const host = address.address === "0.0.0.0" || address.address === "::" ? "localhost"
    : address.family === "IPv6" ? `[${address.address}]` : address.address
  return `http://${host}:${address.port}`
}

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
export const serveListener = Effect.fnUntraced(function*(environment: Environment, port: number) {
  const config = yield* AppConfig
  const scope = yield* Effect.scope
  const observe = makeObserver({
    environment,
    routeOf: (url) => (isConsolePath(url) ? consoleRouteOf(url) : routeOfUrl(url)),
    tracer: yield* RequestTracer,
    accessLog: makeAccessLog(config.logFormat, config.logLevel, config.accessLog)
  })
  const nodeServer = drainOnClose(createLimitedServer(config.http), config.shutdownDrainMs)
  // requests run in a scope that closes after the server's (finalizers run in reverse): in-flight
  // requests finish within the drain rather than being interrupted first
  const requests = yield* Scope.fork(scope)
  yield* NodeHttpServer.make(() => nodeServer, { port, host: config.host })
  const api = yield* NodeHttpServer.makeHandler(yield* apiProgram, { scope: requests }).pipe(forApiListener(environment))
  const console = yield* NodeHttpServer.makeHandler((yield* ConsoleApp).app, { scope: requests }).pipe(forListener(environment))
  const listener = observe((request, response) => (isConsolePath(request.url) ? console : api)(request, response))
  nodeServer.on("request", listener)
  yield* Scope.addFinalizer(scope, Effect.sync(() => nodeServer.off("request", listener)))
  return addressOf(nodeServer)
})
