/**
 * The vehicle query: validate, find the vehicle (registry, upstream cache, upstream, or the
 * sandbox generator), add the requested enrichments, and only then charge one plate query, so a
 * request that fails for any reason consumes nothing.
 */
import { Clock, Data, Effect, Option } from "effect"
import { isPaidOrCustom, type Principal } from "../accounts/Domain.js"
import { Catalog } from "../catalog/Catalog.js"
import { classification, codiaLookup, sheetLookup, tires } from "../catalog/Enrichments.js"
import * as Charges from "../metering/Charges.js"
import { Metering } from "../metering/Metering.js"
import { AppConfig } from "../platform/Config.js"
import { RequestId } from "../platform/RequestContext.js"
import { generateVehicle } from "../sandbox/Generator.js"
import { sandboxBehaviour } from "../sandbox/Scenarios.js"
import type { VehicleData, VehicleQueryParams, VehicleResponse } from "./Api.js"
import { normalizePlate } from "./Plates.js"
import type { VehicleFacts } from "./Records.js"
import { VehicleStore } from "./Store.js"
import { SourceUnavailable, VehicleUpstream } from "./Upstream.js"

export class InvalidPlate extends Data.TaggedError("InvalidPlate")<{ readonly raw: string }> {}
export class InvalidParameter extends Data.TaggedError("InvalidParameter")<{ readonly message: string }> {}
export class PaidPlanRequired extends Data.TaggedError("PaidPlanRequired")<{ readonly options: ReadonlyArray<string> }> {}

/** Where the answer came from, for `debug` and for the sandbox's extra fields. */
export interface Lookup {
  readonly facts: Option.Option<VehicleFacts>
  readonly source: "registry" | "upstream" | "synthetic" | "none"
  readonly cache: "hit" | "miss"
  readonly stale?: boolean
  readonly sandbox?: { readonly scenario: string; readonly seed: string | null; readonly vehicleType: string | null }
}

const UPSTREAM_FRESH_MS = 7 * 24 * 3_600_000
const UPSTREAM_MISS_FRESH_MS = 24 * 3_600_000

export class VehicleQuery extends Effect.Service<VehicleQuery>()("vda/VehicleQuery", {
  effect: Effect.gen(function*() {
    const store = yield* VehicleStore
    const upstream = yield* VehicleUpstream
    const catalog = yield* Catalog
    const metering = yield* Metering
    const config = yield* AppConfig

    const production = (principal: Principal, plate: string) =>
      Effect.gen(function*() {
        const stored = yield* store.find(plate)
        const now = yield* Clock.currentTimeMillis
        const fromStore = (stale: boolean): Lookup => ({
          facts: Option.fromNullable(stored?.facts),
          source: stored?.source ?? "none",
          cache: "hit",
          ...(stale ? { stale } : {})
        })
        if (stored !== undefined) {
          const age = now - stored.fetchedAt.getTime()
          if (stored.source === "registry" || age < (stored.found ? UPSTREAM_FRESH_MS : UPSTREAM_MISS_FRESH_MS)) {
            return fromStore(false)
          }
        }
        if (!upstream.enabled) {
          return stored !== undefined ? fromStore(true) : { facts: Option.none(), source: "none", cache: "miss" } satisfies Lookup
        }
        // refuse before calling the upstream for a request that could not be charged anyway
        yield* metering.precheck(Charges.plateQuery(principal, plate, now))
        const answer = yield* upstream.fetch(plate).pipe(
          // serve what we last knew rather than nothing when the upstream is down
          Effect.catchTag("SourceUnavailable", (e) => (stored?.found ? Effect.succeed(undefined) : Effect.fail(e)))
        )
        if (answer === undefined) return fromStore(true)
        yield* store.cacheUpstream(plate, Option.getOrNull(answer), new Date(now))
        return { facts: answer, source: "upstream", cache: "miss" } satisfies Lookup
      })

    const sandbox = (plate: string, params: VehicleQueryParams) =>
      Effect.gen(function*() {
        const behaviour = sandboxBehaviour(plate, params.sandbox_scenario)
        if (behaviour.scenario === "unavailable") {
          return yield* new SourceUnavailable({ reason: "sandbox scenario unavailable" })
        }
        if (behaviour.cacheMiss) yield* Effect.sleep(config.sandboxLatencyMs)
        const seed = params.sandbox_seed ?? null
        const generated = behaviour.notFound ? undefined : generateVehicle(plate, seed ?? "", behaviour.scenario)
        return {
          facts: Option.fromNullable(generated?.facts),
          source: "synthetic",
          cache: behaviour.cacheMiss ? "miss" : "hit",
          sandbox: { scenario: behaviour.scenario, seed, vehicleType: generated?.vehicleType ?? null }
        } satisfies Lookup
      })

    const enrich = (facts: VehicleFacts, params: VehicleQueryParams) =>
      Effect.gen(function*() {
        if (!params.codia && !params.sheet && !params.tires && !params.classification) return {}
        const vehicle = { make: facts.make, model: facts.model, year: facts.year }
        const id = yield* catalog.identify(vehicle)
        return {
          ...(params.codia ? { codia: codiaLookup(id) } : {}),
          ...(params.sheet ? { sheet: sheetLookup(id) } : {}),
          ...(params.classification ? { classification: classification(id, vehicle) } : {}),
          ...(params.tires ? { tires: tires(id) } : {})
        }
      })

    const validate = (principal: Principal, rawPlate: string, params: VehicleQueryParams) =>
      Effect.gen(function*() {
        const plate = normalizePlate(rawPlate)
        if (plate === undefined) return yield* new InvalidPlate({ raw: rawPlate })
        if (principal.environment === "production") {
          const sandboxOnly = (["sandbox_scenario", "sandbox_seed"] as const).filter((p) => params[p] !== undefined)
          if (sandboxOnly.length > 0) {
            return yield* new InvalidParameter({
              message: `${sandboxOnly.join(" and ")} ${sandboxOnly.length > 1 ? "are" : "is"} accepted by the sandbox only`
            })
          }
        }
        if (params.onMiss !== undefined) {
          return yield* new InvalidParameter({ message: "onMiss=search is not available" })
        }
        const paid = (["codia", "sheet", "tires"] as const).filter((option) => params[option] === true)
        if (paid.length > 0 && !isPaidOrCustom(principal.entitlements.plan)) {
          return yield* new PaidPlanRequired({ options: paid })
        }
        return plate
      })

    const run = (principal: Principal, rawPlate: string, params: VehicleQueryParams) =>
      Effect.gen(function*() {
        const plate = yield* validate(principal, rawPlate, params)
        const started = yield* Clock.currentTimeMillis
        const lookup: Lookup = yield* (principal.environment === "sandbox" ? sandbox(plate, params) : production(principal, plate))
        const looked = yield* Clock.currentTimeMillis
        const data: VehicleData | null = yield* Option.match(lookup.facts, {
          onNone: () => Effect.succeed(null),
          onSome: (facts) =>
            Effect.map(enrich(facts, params), (enrichments): VehicleData => ({
              plate,
              ...facts,
              ...enrichments,
              ...(lookup.sandbox
                ? {
                  ...(lookup.sandbox.vehicleType ? { vehicleType: lookup.sandbox.vehicleType } : {}),
                  sandbox: true as const,
                  scenario: lookup.sandbox.scenario
                }
                : {})
            }))
        })
        const enriched = yield* Clock.currentTimeMillis
        yield* metering.consume(Charges.plateQuery(principal, plate, enriched))
        const debug = params.debug
          ? {
            requestId: yield* RequestId,
            cache: lookup.cache,
            source: lookup.source,
            ...(lookup.stale ? { stale: true } : {}),
            ...(lookup.sandbox ? { scenario: lookup.sandbox.scenario, seed: lookup.sandbox.seed } : {}),
            timings: { lookupMs: looked - started, enrichmentMs: enriched - looked }
          }
          : undefined
        const response: VehicleResponse = {
          success: true,
          found: data !== null,
          data: data !== null && debug !== undefined ? { ...data, debug } : data
        }
        return response
      })

    return { run }
  }),
  dependencies: [VehicleStore.Default, VehicleUpstream.Default, Catalog.Default]
}) {}
