/**
 * Requests per minute, per account and environment, shared by every key: one UTC-minute window,
 * counted through the consumption primitive so the limit is exact across processes.
 */
import { Clock, Effect } from "effect"
import type { Principal } from "../accounts/Domain.js"
import { Metering } from "./Metering.js"
import { minuteOf } from "./Periods.js"

export interface Admission {
  /** Null when the plan has no per-minute limit. */
  readonly limit: number | null
  readonly remaining: number | null
  readonly resetAt: Date
}

export class RateLimiter extends Effect.Service<RateLimiter>()("vda/RateLimiter", {
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    return {
      /** Counts this request; fails with `LimitReached` (meter `requests`) past the limit. */
      admit: (principal: Principal) =>
        Effect.gen(function*() {
          const window = minuteOf(yield* Clock.currentTimeMillis)
          const limit = principal.entitlements.requestsPerMinute
          const [result] = yield* metering.consume({
            accountId: principal.accountId,
            environment: principal.environment,
            charges: [{ meter: "requests", amount: 1, limit, period: window }]
          })
          return {
            limit,
            remaining: limit === null ? null : Math.max(0, limit - (result?.used ?? 0)),
            resetAt: window.end
          } satisfies Admission
        })
    }
  }),
  dependencies: [Metering.Default]
}) {}
