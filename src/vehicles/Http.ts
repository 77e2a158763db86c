import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPrincipal } from "../accounts/Domain.js"
import { Api } from "../Api.js"
import { AcceptedVehicleOperation } from "../operations/Api.js"
import { accepted } from "../operations/Http.js"
import { Operations } from "../operations/Operations.js"
import * as Errors from "../platform/Errors.js"
import { INVALID_PLATE_MESSAGE } from "./Plates.js"
import type { LimitReached } from "../metering/Metering.js"
import type { SourceUnavailable } from "./Upstream.js"
import { type InvalidParameter, type InvalidPlate, type PaidPlanRequired, VehicleQuery } from "./VehicleQuery.js"

/** A vehicle query refused (nothing consumed), or its source down, as the contract's error (v1 and v2 alike). */
export const refuseVehicleQuery = <A, R>(
  effect: Effect.Effect<A, InvalidPlate | InvalidParameter | PaidPlanRequired | SourceUnavailable | LimitReached, R>
) =>
  effect.pipe(
    Effect.catchTags({
      InvalidPlate: () =>
        Errors.badRequest("invalid_plate", INVALID_PLATE_MESSAGE),
      InvalidParameter: (e) => Errors.invalidRequest(e.message),
      PaidPlanRequired: (e) =>
        Errors.forbidden("access_denied", `${e.options.join(", ")} ${e.options.length > 1 ? "need" : "needs"} a paid or custom plan`),
      SourceUnavailable: () => Errors.temporarilyUnavailable("The vehicle source is temporarily unavailable; nothing was charged"),
      LimitReached: Errors.limitReached
    })
  )

export const VehiclesHttpLive = HttpApiBuilder.group(Api, "vehicles", (handlers) =>
  Effect.gen(function*() {
    const query = yield* VehicleQuery
    const operations = yield* Operations
    return handlers.handle("getVehicle", ({ params, query: queryParams }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const outcome = yield* query.run(principal, params.plate, queryParams)
        if (outcome._tag === "Answered") return outcome.response
        const operation = yield* operations.createVehicleSearch(principal, outcome.plate, queryParams)
        yield* accepted(operation.id)
        return new AcceptedVehicleOperation(operation)
      }).pipe(refuseVehicleQuery))
  }))
