/**
 * The vehicle query's searches (`vehicles/Searches.ts`) as operations: created and charged by
 * `Operations`, answered 202 with the `Location` to poll.
 */
import { Effect, Layer } from "effect"
import { VehicleSearches } from "../vehicles/Searches.js"
import { AcceptedVehicleOperation } from "../vehicles/SearchOperation.js"
import { accepted } from "./Http.js"
import { Operations } from "./Operations.js"

export const VehicleSearchesLive = Layer.effect(
  VehicleSearches,
  Effect.map(Operations, (operations) =>
    VehicleSearches.of({
      accept: (principal, plate, params) =>
        operations.createVehicleSearch(principal, plate, params).pipe(
          Effect.tap((operation) => accepted(operation.id)),
          Effect.map((operation) => new AcceptedVehicleOperation(operation))
        )
    }))
)
