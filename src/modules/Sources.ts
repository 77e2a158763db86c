/**
 * Where module records come from: the sandbox generator (by scenario, with a simulated latency),
 * or in production the module's upstream when one is configured, else the registry.
 */
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import type { ModuleName, ModuleOutcome } from "../../workflows/shared.js"
import { AppConfig } from "../platform/Config.js"
import type { Environment } from "../platform/RequestContext.js"
import { syntheticModule } from "../sandbox/Modules.js"
import { sandboxBehaviour } from "../sandbox/Scenarios.js"
import { ModuleRegistry } from "./Registry.js"
import { ModuleUpstream } from "./Upstream.js"

/** The source could not answer; `retryable` says whether trying again later may help. */
export class ModuleUnavailable extends Data.TaggedError("ModuleUnavailable")<{
  readonly message: string
  readonly retryable: boolean
}> {}

export interface ModuleLookup {
  readonly environment: Environment
  readonly plate: string
  readonly module: ModuleName
  /** Every module of the operation (the sandbox's `partial` scenario fails the first). */
  readonly requested: ReadonlyArray<ModuleName>
}

const REDUCED_COVERAGE = "The source covered only part of the jurisdictions for this plate"

const answered = (data: unknown, reducedCoverage: boolean): ModuleOutcome => ({
  status: reducedCoverage ? "partial" : "completed",
  data,
  error: null,
  warnings: reducedCoverage ? [{ code: "reduced_coverage", message: REDUCED_COVERAGE }] : []
})

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const registry = yield* ModuleRegistry
  const upstream = yield* ModuleUpstream

  const sandbox = (lookup: ModuleLookup) =>
    Effect.gen(function*() {
      yield* Effect.sleep(config.sandboxLatencyMs)
      const { scenario } = sandboxBehaviour(lookup.plate, undefined)
      const synthetic = syntheticModule(lookup.plate, scenario, lookup.module, lookup.requested, yield* Clock.currentTimeMillis)
      if (synthetic._tag === "Unavailable") {
        return yield* new ModuleUnavailable({
          message: `The ${lookup.module} source is unavailable (sandbox scenario ${scenario})`,
          retryable: synthetic.retryable
        })
      }
      return answered(synthetic.data, synthetic.reducedCoverage)
    })

  const production = (lookup: ModuleLookup) =>
    Option.match(upstream.lookup(lookup.module, lookup.plate), {
      onNone: () => Effect.map(registry.data(lookup.plate, lookup.module), (data) => answered(data, false)),
      onSome: (fetch) =>
        fetch.pipe(
          Effect.map((a) => answered(a.data, a.reducedCoverage)),
          Effect.mapError((e) => new ModuleUnavailable({ message: `The ${lookup.module} source failed: ${e.message}`, retryable: e.retryable }))
        )
    })

  return {
    fetch: (lookup: ModuleLookup): Effect.Effect<ModuleOutcome, ModuleUnavailable> =>
      lookup.environment === "sandbox" ? sandbox(lookup) : production(lookup)
  }
})

export class ModuleSources extends Context.Service<ModuleSources, Effect.Success<typeof make>>()("vda/ModuleSources", { make }) {
  static readonly layer = Layer.effect(ModuleSources, make).pipe(Layer.provide([ModuleRegistry.layer, ModuleUpstream.layer]))
}
