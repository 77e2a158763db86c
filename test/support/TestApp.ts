/**
 * The real HTTP application, in-process: the same layers main.ts serves, on a fresh database,
 * called through web handlers for the production and sandbox listeners.
 */
import { HttpApiBuilder, HttpApp } from "@effect/platform"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted, Runtime } from "effect"
import { Accounts, type CreatedKey } from "../../src/accounts/Accounts.js"
import type { PlanId } from "../../src/accounts/Domain.js"
import { HttpStackLive } from "../../src/Http.js"
import { AppConfig } from "../../src/platform/Config.js"
import { type DatabaseTimeouts, pgClientLayer } from "../../src/platform/Database.js"
import { CurrentEnvironment, type Environment } from "../../src/platform/RequestContext.js"
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
}

/** Configuration for tests: only what is given, with a short sandbox latency. */
export const testConfig = (config: Record<string, string> = {}) =>
  AppConfig.Default.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({
      SANDBOX_MODULE_LATENCY_MS: "50",
      ...config
    })))))
  )

export const makeTestApp = async (options: TestAppOptions = {}) => {
  const databaseUrl = options.databaseUrl ?? (await freshDatabase())
  const layer = Layer.mergeAll(HttpStackLive, Accounts.Default).pipe(
    Layer.provideMerge(pgClientLayer(Redacted.make(databaseUrl), 10, options.databaseTimeouts)),
    Layer.provide(testConfig(options.config)),
    Layer.provide(options.clock?.layer ?? Layer.empty)
  )
  const runtime = ManagedRuntime.make(layer)
  const app = await runtime.runPromise(HttpApiBuilder.httpApp)
  const rt = await runtime.runtime()
  const handlerFor = (environment: Environment): Call => {
    // as each listener does: the environment in the runtime the requests run on
    const handler = HttpApp.toWebHandlerRuntime(Runtime.provideService(rt, CurrentEnvironment, environment))(app)
    return (path, init) => handler(new Request(`http://vda.test${path}`, init))
  }

  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof layer>>) => runtime.runPromise(effect)

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

  return {
    databaseUrl,
    production: handlerFor("production"),
    sandbox: handlerFor("sandbox"),
    run,
    createAccount,
    dispose: () => runtime.dispose()
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
