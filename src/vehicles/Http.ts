import { Context, Effect, Layer } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { PaidPlanRequired, Principal } from "../principal/Domain.js"
import { currentPrincipal } from "../principal/Security.js"
import { Api, apiGroup } from "../Api.js"
import { SOURCE_UNAVAILABLE_MESSAGE, type VehicleQueryParams } from "./Api.js"
import * as Errors from "../platform/http/Errors.js"
import { preEncoded, preEncodedPerObject } from "../platform/http/PreEncoded.js"
import { INVALID_PLATE_MESSAGE } from "./Plates.js"
import { VehicleResponse } from "./Response.js"
import { AcceptedVehicleOperation } from "./SearchOperation.js"
import { VehicleSearches } from "./Searches.js"
import { type PendingAdmission, RequestAdmission } from "../metering/Admission.js"
import type { LimitReached } from "../metering/Metering.js"
import type { SourceUnavailable } from "./Upstream.js"
import { type InvalidParameter, type InvalidPlate, VehicleQuery } from "./VehicleQuery.js"

/** A vehicle query refused (nothing consumed), or its source down, as the contract's error (v1 and v2 alike). */
export const refuseVehicleQuery = <A, R>(
  effect: Effect.Effect<A, Errors.ApiError | InvalidPlate | InvalidParameter | PaidPlanRequired | SourceUnavailable | LimitReached, R>
) =>
  effect.pipe(
    Effect.catchTags({
      InvalidPlate: () =>
        Errors.badRequest("invalid_plate", INVALID_PLATE_MESSAGE),
      InvalidParameter: (e) => Errors.invalidRequest(e.message),
      PaidPlanRequired: (e) =>
        Errors.forbidden("access_denied", `${e.options.join(", ")} ${e.options.length > 1 ? "need" : "needs"} a paid or custom plan`),
      SourceUnavailable: () => Errors.temporarilyUnavailable(SOURCE_UNAVAILABLE_MESSAGE),
      LimitReached: Errors.limitReached
    })
  )

const make = Effect.gen(function*() {
  const query = yield* VehicleQuery
  const searches = yield* VehicleSearches
  // a plain answer is the same object for the same stored vehicle (VehicleQuery): encoded once
  const encodedPlain = preEncodedPerObject(VehicleResponse, (response: VehicleResponse) => response)

  /** The query of an admitted request: answered (charged), or accepted as a vehicle search (202). */
  const answer = Effect.fnUntraced(function*(principal: Principal, plate: string, queryParams: VehicleQueryParams) {
    const outcome = yield* query.run(principal, plate, queryParams)
    if (outcome._tag === "Answered") return preEncoded(VehicleResponse, outcome.response)
    return preEncoded(AcceptedVehicleOperation, yield* searches.accept(principal, outcome.plate, queryParams))
  }, refuseVehicleQuery)

  /** The query of a request its handler admits: prepared, then charged with its admission, in one round trip. */
  const answerAdmitting = (pending: PendingAdmission, principal: Principal, plate: string, queryParams: VehicleQueryParams) =>
    Effect.flatMap(query.prepare(principal, plate, queryParams), (prepared) =>
      Effect.flatMap(pending.admit(prepared && { expected: pending.expected, consumption: prepared.consumption }), (admission) => {
        // a refusal, the source, a search, or an account changed since: as any query
        if (prepared === undefined || !admission.charged) return answer(admission.admitted.principal, plate, queryParams)
        if (admission.refused !== undefined) return Errors.limitReached(admission.refused)
        return Effect.succeed(encodedPlain(prepared.response))
      }))

  /** One request's vehicle query, its answer encoded whatever it is. */
  const handle = (plate: string, queryParams: VehicleQueryParams) =>
    Effect.flatMap(currentPrincipal, (principal) =>
      Effect.withFiber((fiber) => {
        const pending = fiber.getRef(RequestAdmission)
        return pending === undefined || pending.admitted
          ? answer(principal, plate, queryParams)
          : answerAdmitting(pending, principal, plate, queryParams)
      }))

  return { handle }
})

/**
 * A request's vehicle query (`GET /v2/vehicles/{plate}`), answered as one encoded response: by its
 * endpoint, and by the request pipeline itself for a request with nothing for the router to decode
 * (src/Http.ts, `answeredDirectly`). Both give the same answer: it is this one.
 */
export class VehicleRequests extends Context.Service<VehicleRequests, {
  readonly handle: (
    plate: string,
    queryParams: VehicleQueryParams
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, Errors.ApiError, HttpServerRequest.HttpServerRequest>
}>()("vda/VehicleRequests") {
  /** Needs the vehicle query and its searches. */
  static readonly layer = Layer.effect(VehicleRequests, make)
}

export const VehiclesHttpLive = apiGroup(
  Effect.map(VehicleRequests, (requests) =>
    HttpApiBuilder.group(Api, "vehicles", (handlers) =>
      handlers.handle("getVehicle", ({ params, query: queryParams }) => requests.handle(params.plate, queryParams))))
)
