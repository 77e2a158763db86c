import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api, apiGroup } from "../Api.js"
import { preEncodedPerObject } from "../platform/http/PreEncoded.js"
import { StatusResponse } from "./Api.js"
import { currentPrincipal } from "../principal/Security.js"
import { AccountsRepo } from "./Repo.js"
import { AccountStatus } from "./Status.js"

export const AccountsHttpLive = apiGroup(
  Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const status = yield* AccountStatus
    const statusAnswer = preEncodedPerObject(StatusResponse, (data: typeof StatusResponse.Type["data"]) => ({ success: true as const, data }))
    return HttpApiBuilder.group(Api, "accounts", (handlers) =>
      handlers
        .handle("getStatus", () =>
          Effect.map(Effect.flatMap(currentPrincipal, status.read), statusAnswer))
        .handle("listPlans", Effect.fnUntraced(function*() {
          const principal = yield* currentPrincipal
          const plans = yield* repo.listPlans
          return {
            plans: plans.map((plan) => ({
              id: plan.id,
              currency: "ARS" as const,
              interval: "month" as const,
              priceArs: plan.priceArs,
              plateQueriesMonthly: plan.plateQueriesMonthly,
              moduleQueriesMonthly: plan.moduleQueriesMonthly,
              uniquePlatesDaily: plan.uniquePlatesDaily,
              requestsPerMinute: plan.requestsPerMinute,
              enabledModules: plan.enabledModules,
              timezone: principal.timezone
            }))
          }
        })))
  }))
