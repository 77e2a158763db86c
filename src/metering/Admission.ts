/**
 * Admission of every /v2 request: the API key is checked and the request counted against the
 * account's per-minute limit (shared by all keys, per environment), before anything else.
 *
 * Concurrent requests are admitted in batches, in one round trip: the `vda_admit` database
 * function looks their keys up and counts them (exact across processes through the counters'
 * row locks, see `vda_consume`).
 */
import { Clock, Effect, Either, FiberSet } from "effect"
import { InvalidKey, keyHashOf, principalOf } from "../accounts/Authentication.js"
import type { Principal } from "../accounts/Domain.js"
import { AccountsRepo, type KeyLookupRow } from "../accounts/Repo.js"
import { SqlClient } from "@effect/sql"
import * as Batcher from "../platform/Batcher.js"
import type { Environment } from "../platform/RequestContext.js"
import { LimitReached } from "./Metering.js"
import { minuteOf } from "./Periods.js"

export interface Admitted {
  readonly principal: Principal
  /** Null when the plan has no per-minute limit. */
  readonly limit: number | null
  readonly remaining: number | null
  readonly resetAt: Date
}

interface Request {
  readonly keyHash: string
  readonly environment: Environment
  readonly at: number
}

/** `lastUsedAt` is a recent-activity hint, written at most once a minute per key and process. */
const TOUCH_INTERVAL_MS = 60_000

/** A row of `vda_admit`: the key's account with its allowances, and the request's count. */
interface AdmitRow extends KeyLookupRow {
  readonly request: number
  readonly admitted: boolean
  readonly used: number
}

export class Admission extends Effect.Service<Admission>()("vda/Admission", {
  scoped: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const sql = yield* SqlClient.SqlClient
    const touches = yield* FiberSet.make()
    const lastTouched = new Map<string, number>()

    const admitBatch = (requests: ReadonlyArray<Request>) =>
      Effect.map(
        sql<AdmitRow>`
          select * from vda_admit(${requests.map((r) => r.keyHash)}::text[], ${requests.map((r) => r.environment)}::text[],
            ${requests.map((r) => minuteOf(r.at).start)}::timestamptz[])`,
        (rows) => {
          const byRequest = new Map(rows.map((row) => [row.request, row]))
          return requests.map((request, i): Either.Either<Admitted, InvalidKey | LimitReached> => {
            const row = byRequest.get(i + 1)
            if (row === undefined) return Either.left(new InvalidKey({ reason: "unknown" }))
            if (row.keyEnvironment !== request.environment) return Either.left(new InvalidKey({ reason: "other_environment" }))
            const principal = principalOf(row)
            const limit = principal.entitlements.requestsPerMinute
            const window = minuteOf(request.at)
            if (!row.admitted) {
              return Either.left(new LimitReached({ meter: "requests", limit: limit ?? 0, used: row.used, resetAt: window.end }))
            }
            return Either.right({
              principal,
              limit,
              remaining: limit === null ? null : Math.max(0, limit - row.used),
              resetAt: window.end
            })
          })
        }
      ).pipe(Effect.orDie)

    const batcher = yield* Batcher.make({
      // a lane per key: a busy account batches its own requests, and never queues another's
      key: (request: Request) => request.keyHash,
      process: (_lane, requests) => admitBatch(requests)
    })

    const touch = (keyId: string, now: number) =>
      Effect.suspend(() => {
        const last = lastTouched.get(keyId)
        if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return Effect.void
        lastTouched.set(keyId, now)
        return FiberSet.run(touches, repo.touchKeys([keyId], new Date(now)).pipe(Effect.ignoreLogged)).pipe(Effect.asVoid)
      })

    return {
      /** Fails with `InvalidKey` (401) or `LimitReached` on the `requests` meter (429). */
      admit: (rawKey: string | undefined, environment: Environment): Effect.Effect<Admitted, InvalidKey | LimitReached> =>
        Effect.gen(function*() {
          const keyHash = yield* keyHashOf(rawKey)
          const at = yield* Clock.currentTimeMillis
          const admitted = yield* batcher.submit({ keyHash, environment, at })
          yield* touch(admitted.principal.keyId, at)
          return admitted
        })
    }
  }),
  dependencies: [AccountsRepo.Default]
}) {}
