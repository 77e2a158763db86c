/**
 * Where module records come from (a port): in production the module's upstream when one is
 * configured, else the registry (`ModuleSource.Live`); in the sandbox its generator, by scenario
 * (`sandbox/Sources.ts`); `ModuleSource.Test` answers canned data. `ModuleSources` holds one per
 * environment, built once with the activities.
 */
import { Context, Data, Effect, Layer, Option } from "effect"
import type { ModuleName, ModuleOutcome } from "../../workflows/shared.js"
import { buildPerEnvironment, type PerEnvironment } from "../platform/http/PerEnvironment.js"
import { answered } from "./Outcomes.js"
import { ModuleRegistry } from "./Registry.js"
import { ModuleUpstream } from "./Upstream.js"

/** The source could not answer; `retryable` says whether trying again later may help. */
export class ModuleUnavailable extends Data.TaggedError("ModuleUnavailable")<{
  readonly message: string
  readonly retryable: boolean
}> {}

export interface ModuleLookup {
  readonly plate: string
  readonly module: ModuleName
  /** Every module of the operation (the sandbox's `partial` scenario fails the first). */
  readonly requested: ReadonlyArray<ModuleName>
}

export class ModuleSource extends Context.Service<ModuleSource, {
  readonly fetch: (lookup: ModuleLookup) => Effect.Effect<ModuleOutcome, ModuleUnavailable>
}>()("vda/ModuleSource") {
  /**
   * Production: the module's upstream when one is configured, else the registry. Its services
   * come from the application's, as the environments' sources are built apart (`ModuleSources`).
   */
  static readonly Live = Layer.effect(
    ModuleSource,
    Effect.gen(function*() {
      const registry = yield* ModuleRegistry
      const upstream = yield* ModuleUpstream
      return ModuleSource.of({
        fetch: (lookup) =>
          Option.match(upstream.lookup(lookup.module, lookup.plate), {
            onNone: () => Effect.map(registry.data(lookup.plate, lookup.module), (data) => answered(data, false)),
            onSome: (fetch) =>
              fetch.pipe(
                Effect.map((a) => answered(a.data, a.reducedCoverage)),
                Effect.mapError((e) => new ModuleUnavailable({ message: `The ${lookup.module} source failed: ${e.message}`, retryable: e.retryable }))
              )
          })
      })
    })
  )

  /** Canned data by module, the same for every plate; a module not listed, or `ModuleUnavailable`, fails. */
  static readonly Test = (answers: Partial<Record<ModuleName, unknown>>) =>
    Layer.succeed(ModuleSource, {
      fetch: ({ module }) => {
        const canned = answers[module]
        if (canned instanceof ModuleUnavailable) return Effect.fail(canned)
        if (canned === undefined) return Effect.fail(new ModuleUnavailable({ message: `no canned ${module} data`, retryable: false }))
        return Effect.succeed(answered(canned, false))
      }
    })
}

/** Each environment's module source, built once: an operation asks its environment's. */
export class ModuleSources extends Context.Service<ModuleSources, PerEnvironment<typeof ModuleSource.Service>>()("vda/ModuleSources") {
  static readonly layer = <L extends PerEnvironment<Layer.Layer<ModuleSource, any, any>>>(sources: L) =>
    Layer.effect(ModuleSources, buildPerEnvironment(ModuleSource, sources))
}
