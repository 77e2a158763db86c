/**
 * The sandbox's sources for the vehicle query and the module operations: synthetic data by plate,
 * seed and scenario, with a simulated latency where the scenario makes the source wait.
 */
import { Clock, Effect, Layer, Option } from "effect"
import { answered } from "../modules/Outcomes.js"
import { ModuleSource, ModuleUnavailable } from "../modules/Sources.js"
import { AppConfig } from "../platform/config/Config.js"
import { elapsedSince, found, type Lookup, SEARCH, VehicleSource } from "../vehicles/Sources.js"
import type { VehicleQueryParams } from "../vehicles/Api.js"
import { SourceUnavailable } from "../vehicles/Upstream.js"
import { generateVehicle } from "./Generator.js"
import { syntheticModule } from "./Modules.js"
import { sandboxBehaviour } from "./Scenarios.js"

export const SandboxVehicleSource = Layer.effect(
  VehicleSource,
  Effect.gen(function*() {
    const config = yield* AppConfig

    const generated = Effect.fnUntraced(function*(plate: string, params: VehicleQueryParams, started: number) {
      const behaviour = sandboxBehaviour(plate, params.sandbox_scenario)
      if (behaviour.scenario === "unavailable") {
        return yield* new SourceUnavailable({ reason: "sandbox scenario unavailable" })
      }
      if (behaviour.cacheMiss) yield* Effect.sleep(config.sandboxLatencyMs)
      const seed = params.sandbox_seed ?? null
      const vehicle = behaviour.notFound ? undefined : generateVehicle(plate, seed ?? "", behaviour.scenario)
      return {
        facts: Option.fromNullishOr(vehicle?.facts),
        source: "synthetic",
        cache: behaviour.cacheMiss ? "miss" : "hit",
        sandbox: { scenario: behaviour.scenario, seed, vehicleType: vehicle?.vehicleType ?? null },
        lookupMs: yield* elapsedSince(started)
      } satisfies Lookup
    })

    return VehicleSource.of({
      findLocally: (plate, params, started) => {
        const behaviour = sandboxBehaviour(plate, params.sandbox_scenario)
        if (behaviour.cacheMiss && behaviour.scenario !== "unavailable" && params.onMiss === "search") return Effect.succeed(SEARCH)
        return Effect.map(generated(plate, params, started), found)
      },
      // every sandbox answer is made for its request (and may wait): none is known at once
      findAtOnce: () => undefined,
      search: generated
    })
  })
)

export const SandboxModuleSource = Layer.effect(
  ModuleSource,
  Effect.gen(function*() {
    const config = yield* AppConfig
    return ModuleSource.of({
      fetch: Effect.fnUntraced(function*(lookup) {
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
    })
  })
)
