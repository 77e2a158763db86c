/**
 * Where the vehicle query sends a plate the source must be asked for, when the client asked to
 * poll for it (`onMiss=search`): a vehicle search operation. Operations run it and implement this
 * (`operations/VehicleSearches.ts`).
 */
import { Context, type Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { Principal } from "../principal/Domain.js"
import type { LimitReached } from "../metering/Metering.js"
import type { VehicleQueryParams } from "./Api.js"
import type { AcceptedVehicleOperation } from "./SearchOperation.js"

export class VehicleSearches extends Context.Service<VehicleSearches, {
  /**
   * The search of a valid `plate`, created and charged; the request's answer becomes a 202 with
   * where to poll it.
   */
  readonly accept: (
    principal: Principal,
    plate: string,
    params: VehicleQueryParams
  ) => Effect.Effect<AcceptedVehicleOperation, LimitReached, HttpServerRequest.HttpServerRequest>
}>()("vda/VehicleSearches") {}
