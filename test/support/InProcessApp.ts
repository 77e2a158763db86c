/**
 * The in-process application of `makeTestApp` as a layer, for tests written with @effect/vitest:
 * its services for the tests' effects, and the app itself (`InProcessApp`) for what only it
 * does (its listeners' handlers, accounts with keys). Disposed with the layer.
 */
import { Context, Effect, Layer } from "effect"
import { makeTestApp, type TestApp, type TestAppOptions } from "./TestApp.js"

export class InProcessApp extends Context.Service<InProcessApp, TestApp>()("test/InProcessApp") {}

/** Every service of the application. */
export type AppServices = Parameters<TestApp["run"]>[0] extends Effect.Effect<any, any, infer R> ? R : never

export const inProcessAppLayer = (options?: TestAppOptions): Layer.Layer<InProcessApp | AppServices> =>
  Layer.effectContext(Effect.gen(function*() {
    const app = yield* Effect.acquireRelease(Effect.promise(() => makeTestApp(options)), (app) => Effect.promise(() => app.dispose()))
    const services = yield* Effect.promise(() => app.run(Effect.context<AppServices>()))
    return Context.add(services, InProcessApp, app)
  }))
