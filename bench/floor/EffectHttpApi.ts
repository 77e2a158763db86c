/**
 * The framework's floor: Effect's HttpApi on Node with nothing of the service in it. One endpoint,
 * `GET /v2/vehicles/:plate`, whose plate is decoded by its schema and whose answer is a constant
 * (FLOOR_ANSWER, the service's own answer for the bench's plate) encoded as JSON; served as the
 * service serves its API (`NodeHttpServer.makeHandler`, the router's own tracing off). No key, no
 * metering, no database, no log: what the framework costs per request before any work.
 *
 * Prints `{"url": …}` when it listens; ends when its standard input closes.
 */
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { HttpMiddleware, HttpRouter } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"

const answer: unknown = JSON.parse(process.env.FLOOR_ANSWER ?? "{}")

class Vehicles extends HttpApiGroup.make("vehicles").add(
  HttpApiEndpoint.get("getVehicle", "/v2/vehicles/:plate", {
    params: { plate: Schema.String },
    success: Schema.Unknown
  })
) {}
class FloorApi extends HttpApi.make("floor").add(Vehicles) {}

const VehiclesLive = HttpApiBuilder.group(FloorApi, "vehicles", (handlers) =>
  handlers.handle("getVehicle", () => Effect.succeed(answer)))

const serve = Effect.gen(function*() {
  const server = createServer()
  yield* NodeHttpServer.make(() => server, { port: 0, host: "127.0.0.1" })
  const app = yield* HttpRouter.toHttpEffect(HttpApiBuilder.layer(FloorApi).pipe(Layer.provide(VehiclesLive)))
  const handler = yield* NodeHttpServer.makeHandler(app, { scope: yield* Effect.scope }).pipe(
    Effect.provideService(HttpMiddleware.TracerDisabledWhen, () => true)
  )
  server.on("request", handler)
  const address = server.address()
  if (address === null || typeof address === "string") return yield* Effect.die("no address")
  console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }))
  return yield* Effect.never
})

process.stdin.on("close", () => process.exit(0)).resume()
Effect.runFork(Effect.scoped(serve).pipe(Effect.provide(NodeHttpServer.layerHttpServices)))
