/**
 * The real HTTP application, in-process: the same layers main.ts serves, on a fresh database,
 * called through web handlers for the production and sandbox listeners.
 */
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { ConfigProvider, Context, Effect, Exit, Layer, ManagedRuntime, Redacted, Scope } from "effect"
import { HttpEffect, type HttpServerRequest } from "effect/http"
import { Accounts, type CreatedKey } from "../../src/accounts/Accounts.js"
import type { PlanId } from "../../src/principal/Domain.js"
import { apiProgramRouting, type ApiRouter, apiRequestContext, HttpStackLive, listenerContext } from "../../src/Http.js"
import { serveListener } from "../../src/Listeners.js"
import { serveAdmin } from "../../src/platform/observability/AdminServer.js"
import { TelemetryLive } from "../../src/platform/observability/Telemetry.js"
import { AppConfig } from "../../src/platform/config/Config.js"
import { type DatabaseTimeouts, pgClientLayer } from "../../src/platform/db/Database.js"
import type { Environment } from "../../src/platform/http/RequestContext.js"
import type { ManualClock } from "./ManualClock.js"
import { freshDatabase } from "./Postgres.js"

export type Call = (path: string, init?: RequestInit) => Promise<Response>

export interface TestAccount {
  readonly id: string
  readonly production: CreatedKey
  readonly sandbox: CreatedKey
}

export interface TestAppOptions {
  readonly databaseUrl?: string
  readonly clock?: ManualClock
  /** Configuration as environment variables would give it. */
  readonly config?: Record<string, string>
  readonly databaseTimeouts?: DatabaseTimeouts
  /** Traces go here (tracing is off without one). */
  readonly spanProcessor?: SpanProcessor
  /** The router of the requests the pipeline routes, as this gives it back (to watch them). */
  readonly routing?: (router: ApiRouter) => ApiRouter
}

/** Configuration for tests: only what is given, with a short sandbox latency. */
export const testConfig = (config: Record<string, string> = {}) =>
  // fresh: Effect 4 shares a layer built once across provides, and each test's settings are its own
  Layer.fresh(AppConfig.layer).pipe(
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({
      env: {
        SANDBOX_MODULE_LATENCY_MS: "50",
        // the access log (one line per request at info) would drown the test output
        LOG_LEVEL: "warn",
        ...config
      }
    })))
  )

export const makeTestApp = async (options: TestAppOptions = {}) => {
  const databaseUrl = options.databaseUrl ?? (await freshDatabase())
  const layer = Layer.mergeAll(HttpStackLive, Accounts.layer).pipe(
    Layer.provideMerge(TelemetryLive({ serviceName: "vehicle-data-api", spanProcessor: options.spanProcessor })),
    Layer.provideMerge(pgClientLayer(Redacted.make(databaseUrl), 10, options.databaseTimeouts)),
    Layer.provideMerge(testConfig(options.config)),
    Layer.provideMerge(options.clock?.layer ?? Layer.empty)
  )
  const runtime = ManagedRuntime.make(layer)
  const listeners = await runtime.runPromise(Scope.make())
  const app = await runtime.runPromise(Scope.provide(listeners)(apiProgramRouting(options.routing ?? ((router) => router))))
  const services = await runtime.context()
  type Services = typeof services extends Context.Context<infer S> ? S : never
  const listenerContexts = {
    production: await runtime.runPromise(listenerContext("production")),
    sandbox: await runtime.runPromise(listenerContext("sandbox"))
  }
  const handlerFor = (environment: Environment): Call => {
    // as each listener does: the requests run with the API's request context
    const handler = HttpEffect.toWebHandlerWith<Services, Services | HttpServerRequest.HttpServerRequest | Scope.Scope>(
      apiRequestContext(services, listenerContexts[environment])
    )(app)
    return (path, init) => handler(new Request(`http://vda.test${path}`, init))
  }

  const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)

  const createAccount = (input: { readonly plan?: PlanId; readonly timezone?: string; readonly owner?: string } = {}) =>
    run(Effect.gen(function*() {
      const accounts = yield* Accounts
      const account = yield* accounts.create({
        owner: input.owner ?? "Test owner",
        plan: input.plan ?? "growth",
        timezone: input.timezone ?? "America/Argentina/Buenos_Aires"
      })
      const production = yield* accounts.createKey({ accountId: account.id, environment: "production", name: "test" })
      const sandbox = yield* accounts.createKey({ accountId: account.id, environment: "sandbox", name: null })
      return { id: account.id, production, sandbox } satisfies TestAccount
    }))

  /** The real listeners (production, sandbox) and the admin listener, as main serves them, on OS ports. */
  const listen = () =>
    runtime.runPromise(Effect.gen(function*() {
      const production = yield* serveListener("production", 0)
      const sandbox = yield* serveListener("sandbox", 0)
      const admin = yield* serveAdmin("127.0.0.1", 0)
      return { production, sandbox, metrics: `http://127.0.0.1:${admin.port}/metrics` }
      // the HTTP platform's services come from the runtime's layer (HttpStackLive)
    }).pipe(Scope.provide(listeners)) as Effect.Effect<{ production: string; sandbox: string; metrics: string }, Error>)

  return {
    databaseUrl,
    listen,
    production: handlerFor("production"),
    sandbox: handlerFor("sandbox"),
    run,
    createAccount,
    dispose: async () => {
      await runtime.runPromise(Scope.close(listeners, Exit.void))
      await runtime.dispose()
    }
  }
}

export type TestApp = Awaited<ReturnType<typeof makeTestApp>>

export const withKey = (key: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string> | undefined), "x-api-key": key }
})

/** A response body as JSON, typed loosely for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const json = (res: Response): Promise<any> => res.json()
