/**
 * The account's status as both API versions show it: owner, plan, the environment's usage and its
 * API keys (never their secrets).
 */
import { Effect } from "effect"
import { UsageReader } from "../metering/UsageReader.js"
import type { Principal } from "./Domain.js"
import { AccountsRepo } from "./Repo.js"

export class AccountStatus extends Effect.Service<AccountStatus>()("vda/AccountStatus", {
  effect: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const usage = yield* UsageReader
    const read = (principal: Principal) =>
      Effect.gen(function*() {
        // one after the other: forking both would copy and diff the request's whole context, which
        // cost more CPU under load than the second round trip's wait (bench:profile)
        const [data, keys] = yield* Effect.all([
          usage.read(principal),
          repo.listKeys(principal.accountId, principal.environment)
        ])
        return {
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
      })
    return { read }
  })
}) {}
