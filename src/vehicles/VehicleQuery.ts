/**
 * The vehicle query: validate, find the vehicle (in the environment's source: registry, upstream
 * cache and upstream, or the sandbox generator), add the requested enrichments, and only then charge one plate query, so a
 * request that fails for any reason consumes nothing.
 *
 * With `onMiss=search`, a plate that would have to wait for the source is not answered here: the
 * caller accepts a vehicle search operation instead (charged when it is created), whose workflow
 * calls `search` to produce the same response.
 */
import { Clock, Context, Data, Effect, Layer, Option, Result } from "effect"
import { VEHICLE_REQUEST_RETRY } from "../platform/sandboxSafe/RetryPolicy.js"
import { isPaidOrCustom, PaidPlanRequired, type Principal } from "../principal/Domain.js"
import { Catalog } from "../catalog/Catalog.js"
import { classification, codiaLookup, sheetLookup, tires } from "../catalog/Enrichments.js"
import * as Charges from "../metering/Charges.js"
import { Metering } from "../metering/Metering.js"
import type { ApiVersion } from "../metering/Meters.js"
import { type Environment, RequestId } from "../platform/http/RequestContext.js"
import type { VehicleQueryParams } from "./Api.js"
import { normalizePlate } from "./Plates.js"
import type { VehicleFacts } from "./Records.js"
import type { VehicleData, VehicleResponse } from "./Response.js"
import { elapsedSince, type Lookup, VehicleSources } from "./Sources.js"

export class InvalidPlate extends Data.TaggedError("InvalidPlate")<{ readonly raw: string }> {}
export class InvalidParameter extends Data.TaggedError("InvalidParameter")<{ readonly message: string }> {}

export type QueryOutcome =
  | { readonly _tag: "Answered"; readonly response: VehicleResponse }
  /** `onMiss=search` and the source must be asked: accept a vehicle search for this plate. */
  | { readonly _tag: "SearchAccepted"; readonly plate: string }

const wantsEnrichments = (params: VehicleQueryParams) => params.codia || params.sheet || params.tires || params.classification

const NOT_FOUND: VehicleResponse = { success: true, found: false, data: null }

const make = Effect.gen(function*() {
  const sources = yield* VehicleSources
  const catalog = yield* Catalog
  const metering = yield* Metering

  const enrich = Effect.fnUntraced(function*(facts: VehicleFacts, params: VehicleQueryParams) {
    if (!wantsEnrichments(params)) return {}
    const vehicle = { make: facts.make, model: facts.model, year: facts.year }
    const id = yield* catalog.identify(vehicle)
    return {
      ...(params.codia ? { codia: codiaLookup(id) } : {}),
      ...(params.sheet ? { sheet: sheetLookup(id) } : {}),
      ...(params.classification ? { classification: classification(id, vehicle) } : {}),
      ...(params.tires ? { tires: tires(id) } : {})
    }
  })

  // the plain answers (no enrichment, no debug) of the stored vehicles, one per stored object: the
  // same answer again for the same vehicle, so its body is encoded once (vehicles/Http.ts)
  const plainAnswers = new WeakMap<VehicleFacts, VehicleResponse>()
  const plainAnswerOf = (plate: string, facts: VehicleFacts): VehicleResponse => {
    const known = plainAnswers.get(facts)
    if (known !== undefined && known.data?.plate === plate) return known
    const answer: VehicleResponse = { success: true, found: true, data: { plate, ...facts } }
    plainAnswers.set(facts, answer)
    return answer
  }

  /** Whether the response asked for is the plain one: no enrichment, no debug. */
  const asksPlain = (params: VehicleQueryParams) => !params.debug && !wantsEnrichments(params)

  /** Whether the response to what `lookup` found is the plain one (no sandbox fields either). */
  const isPlain = (lookup: Lookup, params: VehicleQueryParams) => asksPlain(params) && lookup.sandbox === undefined

  const plainAnswer = (plate: string, lookup: Lookup) =>
    Option.isSome(lookup.facts) ? plainAnswerOf(plate, lookup.facts.value) : NOT_FOUND

  /** The Vehicle response for what the lookup found. */
  const respond = (plate: string, lookup: Lookup, params: VehicleQueryParams, requestId: string) =>
    isPlain(lookup, params) ? Effect.succeed(plainAnswer(plate, lookup)) : respondInFull(plate, lookup, params, requestId)

  const respondInFull = Effect.fnUntraced(function*(plate: string, lookup: Lookup, params: VehicleQueryParams, requestId: string) {
    const started = yield* Clock.currentTimeMillis
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
    const debug = params.debug
      ? {
        requestId,
        cache: lookup.cache,
        source: lookup.source,
        ...(lookup.stale ? { stale: true } : {}),
        ...(lookup.sandbox ? { scenario: lookup.sandbox.scenario, seed: lookup.sandbox.seed } : {}),
        timings: { lookupMs: lookup.lookupMs, enrichmentMs: yield* elapsedSince(started) }
      }
      : undefined
    return {
      success: true,
      found: data !== null,
      data: data !== null && debug !== undefined ? { ...data, debug } : data
    } satisfies VehicleResponse
  })

  /** The plate, unless the query is refused as it stands (a plain check: no effect to run). */
  const validate = (
    principal: Principal,
    rawPlate: string,
    params: VehicleQueryParams
  ): Result.Result<string, InvalidPlate | InvalidParameter | PaidPlanRequired> => {
    const plate = normalizePlate(rawPlate)
    if (plate === undefined) return Result.fail(new InvalidPlate({ raw: rawPlate }))
    if (principal.environment === "production") {
      const sandboxOnly = (["sandbox_scenario", "sandbox_seed"] as const).filter((p) => params[p] !== undefined)
      if (sandboxOnly.length > 0) {
        return Result.fail(new InvalidParameter({
          message: `${sandboxOnly.join(" and ")} ${sandboxOnly.length > 1 ? "are" : "is"} accepted by the sandbox only`
        }))
      }
    }
    const paid = [
      ...(["codia", "sheet", "tires"] as const).filter((option) => params[option] === true),
      ...(params.onMiss !== undefined ? ["onMiss"] : [])
    ]
    if (paid.length > 0 && !isPaidOrCustom(principal.entitlements.plan)) {
      return Result.fail(new PaidPlanRequired({ options: paid }))
    }
    return Result.succeed(plate)
  }

  /**
   * Answers a query (charging one plate query last), or says a vehicle search must be accepted
   * (`onMiss=search` with a plate the source must be asked for).
   */
  const run = Effect.fnUntraced(function*(principal: Principal, rawPlate: string, params: VehicleQueryParams, version: ApiVersion = "v2") {
    const plate = yield* Effect.fromResult(validate(principal, rawPlate, params))
    const started = yield* Clock.currentTimeMillis
    const local = yield* sources[principal.environment].findLocally(plate, params, started)
    if (local._tag === "SearchAccepted") return { _tag: "SearchAccepted", plate } satisfies QueryOutcome
    let lookup: Lookup
    if (local._tag === "Found") {
      lookup = local.lookup
    } else {
      // refuse before calling the upstream for a request that could not be charged anyway
      yield* metering.precheck(Charges.plateQuery(principal, plate, started))
      lookup = yield* local.ask(VEHICLE_REQUEST_RETRY)
    }
    const response = yield* respond(plate, lookup, params, yield* RequestId)
    yield* metering.consume(Charges.plateQuery(principal, plate, yield* Clock.currentTimeMillis, version))
    return { _tag: "Answered", response } satisfies QueryOutcome
  })

  /**
   * The answer to a query that needs neither the source nor a search, with the plate query it
   * consumes, for a caller that charges it itself (with its admission); undefined for any other
   * query, refusals included (`run` answers those). Charges nothing.
   */
  const prepare = (principal: Principal, rawPlate: string, params: VehicleQueryParams, version: ApiVersion = "v2") => {
    const plate = validate(principal, rawPlate, params)
    if (Result.isFailure(plate)) return Effect.succeed(undefined)
    const source = sources[principal.environment]
    // answered and charged at the same instant
    const prepared = (response: VehicleResponse, started: number) =>
      ({ response, consumption: Charges.plateQuery(principal, plate.success, started, version) })
    return Clock.clockWith((clock) => {
      const started = clock.currentTimeMillisUnsafe()
      // the busiest case, a plain answer the source holds in memory, is prepared without an effect
      const atOnce = asksPlain(params) ? source.findAtOnce(plate.success, params, started) : undefined
      if (atOnce !== undefined && atOnce._tag !== "Found") return Effect.succeed(undefined)
      if (atOnce !== undefined && isPlain(atOnce.lookup, params)) return Effect.succeed(prepared(plainAnswer(plate.success, atOnce.lookup), started))
      return source.findLocally(plate.success, params, started).pipe(
        Effect.flatMap((local) =>
          local._tag !== "Found"
            ? Effect.succeed(undefined)
            : Effect.map(Effect.flatMap(RequestId, (requestId) => respond(plate.success, local.lookup, params, requestId)), (response) =>
              prepared(response, started))),
        Effect.orElseSucceed(() => undefined)
      )
    })
  }

  /** The search a vehicle operation runs: waits for the source; charges nothing (done at acceptance). */
  const search = Effect.fnUntraced(function*(environment: Environment, plate: string, params: VehicleQueryParams, requestId: string) {
    const started = yield* Clock.currentTimeMillis
    const lookup = yield* sources[environment].search(plate, params, started)
    return yield* respond(plate, lookup, params, requestId)
  })

  return { run, prepare, search }
})

export class VehicleQuery extends Context.Service<VehicleQuery, Effect.Success<typeof make>>()("vda/VehicleQuery", { make }) {
  /** Needs each environment's source (`VehicleSources`). */
  static readonly layer = Layer.effect(VehicleQuery, make).pipe(Layer.provide(Catalog.layer))
}
