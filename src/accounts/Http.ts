import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { UsageReader } from "../metering/UsageReader.js"
import { CurrentPrincipal } from "./Domain.js"
import { AccountsRepo } from "./Repo.js"

export const AccountsHttpLive = HttpApiBuilder.group(Api, "accounts", (handlers) =>
  Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const usage = yield* UsageReader
    return handlers
      .handle("getStatus", () =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const [data, keys] = yield* Effect.all([
            usage.read(principal),
            repo.listKeys(principal.accountId, principal.environment)
          ], { concurrency: 2 })
          return {
            success: true as const,
            data: {
              owner: principal.owner,
              plan: principal.entitlements.plan,
              usage: data,
              keys: keys.map((key) => ({
                id: key.id,
                prefix: key.prefix,
                last4: key.last4,
                name: key.name,
                status: key.revokedAt === null ? "active" as const : "revoked" as const,
                lastUsedAt: key.lastUsedAt,
                createdAt: key.createdAt
              }))
            }
          }
        }))
      .handle("listPlans", () =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
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
        }))
  }))
