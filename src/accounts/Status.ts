/**
 * The account's status as both API versions show it: owner, plan, the environment's usage and its
 * API keys (never their secrets).
 *
 * Concurrent status reads of one account and environment share one read, as polls do: each
 * request was admitted (and counted) before the read began, so the usage it sees includes it.
 */
import { Effect, Either } from "effect"
import { UsageReader } from "../metering/UsageReader.js"
import * as Batcher from "../platform/Batcher.js"
import type { Principal } from "./Domain.js"
import { AccountsRepo } from "./Repo.js"

export class AccountStatus extends Effect.Service<AccountStatus>()("vda/AccountStatus", {
  scoped: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const usage = yield* UsageReader
    const readNow = (principal: Principal) =>
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
    const reads = yield* Batcher.make({
      key: (principal: Principal) => `${principal.accountId}/${principal.environment}`,
      // the latest admission's view of the account: all of them came before the read
      process: (_key, principals) =>
        Effect.map(readNow(principals.at(-1)!), (status) => principals.map(() => Either.right(status)))
    })
    return {
      /** The status; the same object for the reads that shared it. */
      read: reads.submit,
      /** `read` for a caller outside any fiber: `done` gets the result, once. */
      offerRead: reads.offer
    }
  })
}) {}
