import { Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { PaidPlanRequired, Principal } from "../principal/Domain.js"
import { currentPrincipal } from "../principal/Security.js"
import { Api, apiGroup } from "../Api.js"
import { SOURCE_UNAVAILABLE_MESSAGE, type VehicleQueryParams } from "./Api.js"
import * as Errors from "../platform/http/Errors.js"
import { preEncodedPerObject } from "../platform/http/PreEncoded.js"
import { INVALID_PLATE_MESSAGE } from "./Plates.js"
import { VehicleResponse } from "./Response.js"
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

export const VehiclesHttpLive = apiGroup(
  Effect.gen(function*() {
    const query = yield* VehicleQuery
    const searches = yield* VehicleSearches
    // a plain answer is the same object for the same stored vehicle (VehicleQuery): encoded once
    const encoded = preEncodedPerObject(VehicleResponse, (response: VehicleResponse) => response)

    /** The query of an admitted request: answered (charged), or accepted as a vehicle search. */
    const answer = Effect.fnUntraced(function*(principal: Principal, plate: string, queryParams: VehicleQueryParams) {
      const outcome = yield* query.run(principal, plate, queryParams)
      if (outcome._tag === "Answered") return outcome.response
      return yield* searches.accept(principal, outcome.plate, queryParams)
    }, refuseVehicleQuery)

    type Answered = ReturnType<typeof answer>
    /** An answer of `answer`'s, or the prepared one already encoded. */
    type AnsweredOrEncoded = Effect.Effect<Effect.Success<Answered> | HttpServerResponse.HttpServerResponse, Effect.Error<Answered>, Effect.Services<Answered>>

    /** The query of a request its handler admits: prepared, then charged with its admission, in one round trip. */
    const answerAdmitting = (pending: PendingAdmission, principal: Principal, plate: string, queryParams: VehicleQueryParams) =>
      Effect.flatMap(query.prepare(principal, plate, queryParams), (prepared) =>
        Effect.flatMap(pending.admit(prepared && { expected: pending.expected, consumption: prepared.consumption }), (admission): AnsweredOrEncoded => {
          // a refusal, the source, a search, or an account changed since: as any query
          if (prepared === undefined || !admission.charged) return answer(admission.admitted.principal, plate, queryParams)
          if (admission.refused !== undefined) return Errors.limitReached(admission.refused)
          return Effect.succeed(encoded(prepared.response))
        }))

    return HttpApiBuilder.group(Api, "vehicles", (handlers) =>
      handlers.handle("getVehicle", ({ params, query: queryParams }) =>
        Effect.flatMap(currentPrincipal, (principal) =>
          Effect.withFiber((fiber) => {
            const pending = fiber.getRef(RequestAdmission)
            return pending === undefined || pending.admitted
              ? answer(principal, params.plate, queryParams)
              : answerAdmitting(pending, principal, params.plate, queryParams)
          }))))
  }))
