/**
 * Admission of every /v1 and /v2 request: the API key is checked and the request counted against
 * the account's per-minute limit (shared by all keys, per environment), before anything else.
 *
 * Concurrent requests of one key are admitted in batches, in one round trip: the
 * `vda_admit_consume` database function looks their keys up and counts them (exact across
 * processes through the counters' row locks, see `vda_consume`). A request whose consumption is
 * already known (the lean lane's vehicle query) is charged in the same round trip and commit,
 * provided the account is still as the caller last saw it.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, FiberSet } from "effect"
import { InvalidKey, keyHashOf, principalOf } from "../accounts/Authentication.js"
import type { Principal } from "../accounts/Domain.js"
import { AccountsRepo, type KeyLookupRow } from "../accounts/Repo.js"
import * as Batcher from "../platform/Batcher.js"
import type { Environment } from "../platform/RequestContext.js"
import { countDecision, countRateLimited } from "./Outcomes.js"
import { type ChargeOutcome, type Decision, decisionOf, LimitReached, type PlainConsumption } from "./Metering.js"
import { minuteOf } from "./Periods.js"

export interface Admitted {
  readonly principal: Principal
  /** Null when the plan has no per-minute limit. */
  readonly limit: number | null
  readonly remaining: number | null
  readonly resetAt: Date
  /** Seconds from the request to the end of its minute window. */
  readonly resetInSeconds: number
}

/** The per-minute limit's name in the IETF `RateLimit` fields. */
const RPM_POLICY = "\"rpm\""

/**
 * The rate-limit headers of an admitted request, added to `headers` (which it returns):
 * `X-RateLimit-*`, and the IETF `RateLimit-Policy` and `RateLimit` fields
 * (draft-ietf-httpapi-ratelimit-headers: quota `q` per window `w`, remaining `r`, reset `t`,
 * in seconds). The limits are omitted when the plan has none.
 */
export const rateLimitHeaders = (admitted: Admitted, headers: Record<string, string>) => {
  if (admitted.limit !== null) {
    headers["x-ratelimit-limit"] = String(admitted.limit)
    headers["x-ratelimit-remaining"] = String(admitted.remaining)
    headers["ratelimit-policy"] = `${RPM_POLICY};q=${admitted.limit};w=60`
    headers["ratelimit"] = `${RPM_POLICY};r=${admitted.remaining};t=${admitted.resetInSeconds}`
  }
  headers["x-ratelimit-reset"] = String(Math.floor(admitted.resetAt.getTime() / 1000))
  return headers
}

/** An account as a key last showed it: its consumptions can be charged with its admission. */
export interface KnownAccount {
  readonly principal: Principal
  readonly fingerprint: string
}

/** A consumption made for the account as `expected` showed it. */
export interface PreparedConsumption {
  readonly expected: KnownAccount
  readonly consumption: PlainConsumption
}

export interface AdmittedAndCharged {
  readonly admitted: Admitted
  /** Undefined when the account changed since `expected`: nothing was charged. */
  readonly decision: Decision | undefined
}

interface Request {
  readonly keyHash: string
  readonly environment: Environment
  readonly at: number
  /** Charges made for the account as `expected` showed it. */
  readonly prepared?: PreparedConsumption
}

/** `lastUsedAt` is a recent-activity hint, written at most once a minute per key and process. */
const TOUCH_INTERVAL_MS = 60_000
/** Accounts kept per process, by key hash (a hint only: the database checks the fingerprint). */
const KNOWN_MAX = 10_000

/** A row of `vda_admit_consume` (column names as they are). */
interface AdmitRow {
  readonly request: number
  readonly key_environment: Environment
  readonly fingerprint: string
  /** Null when it is the account the batch expected. */
  readonly account: KeyLookupRow | null
  readonly admitted: boolean
  readonly used: number
  readonly charged: boolean
  readonly charge_failed: ReadonlyArray<boolean> | null
  readonly charge_used: ReadonlyArray<number> | null
  readonly charge_charged: ReadonlyArray<number> | null
}

const outcomesOf = (row: AdmitRow): ReadonlyArray<ChargeOutcome> =>
  (row.charge_failed ?? []).map((failed, i) => ({ failed, used: row.charge_used![i]!, charged: row.charge_charged![i]! }))

/**
 * The charges of the requests prepared for `expected`, as `vda_admit_consume` takes them: one
 * object per charge, requests in order. Others (prepared for an account since changed) are only
 * admitted.
 */
const chargesOf = (requests: ReadonlyArray<Request>, expected: KnownAccount | undefined) =>
  JSON.stringify(requests.flatMap((request, i) =>
    request.prepared !== undefined && request.prepared.expected.fingerprint === expected?.fingerprint
      ? request.prepared.consumption.charges.map((charge) => ({
        request: i + 1,
        meter: charge.meter,
        period_start: charge.period.start,
        amount: charge.amount,
        limited: charge.limit !== undefined,
        lim: charge.limit ?? null,
        distinct_value: charge.distinctValue ?? null
      }))
      : []
  ))

export class Admission extends Effect.Service<Admission>()("vda/Admission", {
  scoped: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    // rows as they come: the few columns are read by name, and most rows carry no account
    const raw = (yield* SqlClient.SqlClient).withoutTransforms()
    const touches = yield* FiberSet.make()
    const lastTouched = new Map<string, number>()
    const known = new Map<string, KnownAccount>()
    const handedOver = new WeakMap<object, Admitted>()

    /** The account a row shows: the one the batch expected, or the one it sent back (then remembered). */
    const principalIn = (keyHash: string, expected: KnownAccount | undefined, row: AdmitRow): Principal => {
      if (row.account === null) return expected!.principal
      if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value!)
      const principal = principalOf(row.account)
      known.set(keyHash, { principal, fingerprint: row.fingerprint })
      return principal
    }

    const decide = (
      request: Request,
      principal: Principal,
      row: AdmitRow
    ): Either.Either<AdmittedAndCharged, InvalidKey | LimitReached> => {
      if (row.key_environment !== request.environment) return Either.left(new InvalidKey({ reason: "other_environment" }))
      const limit = principal.entitlements.requestsPerMinute
      const window = minuteOf(request.at)
      if (!row.admitted) {
        countRateLimited(request.environment)
        return Either.left(new LimitReached({ meter: "requests", limit: limit ?? 0, used: row.used, resetAt: window.end }))
      }
      const decision = request.prepared && row.charged ? decisionOf(request.prepared.consumption.charges, outcomesOf(row)) : undefined
      if (decision !== undefined) countDecision(request.environment, decision)
      return Either.right({
        admitted: {
          principal,
          limit,
          remaining: limit === null ? null : Math.max(0, limit - row.used),
          resetAt: window.end,
          resetInSeconds: Math.max(0, Math.ceil((window.end.getTime() - request.at) / 1000))
        },
        decision
      })
    }

    /** A batch of one key's requests on one listener. */
    const admitBatch = (keyHash: string, environment: Environment, requests: ReadonlyArray<Request>) => {
      const expected = known.get(keyHash)
      return Effect.map(
        // the rows as one JSON value: decoded natively, rather than row by row and array by array
        raw<{ readonly rows: ReadonlyArray<AdmitRow> | null }>`
          select json_agg(r) as rows from vda_admit_consume(${keyHash}, ${environment}, ${expected?.fingerprint ?? null},
            ${requests.map((r) => minuteOf(r.at).start.toISOString())}::timestamptz[], ${chargesOf(requests, expected)}::jsonb) r`,
        ([result]) => {
          const rows = result?.rows ?? []
          if (rows.length === 0) {
            known.delete(keyHash)
            return requests.map(() => Either.left(new InvalidKey({ reason: "unknown" })))
          }
          const principal = principalIn(keyHash, expected, rows[0]!)
          const byRequest = new Map(rows.map((row) => [row.request, row]))
          return requests.map((request, i) => decide(request, principal, byRequest.get(i + 1)!))
        }
      ).pipe(Effect.orDie)
    }

    const batcher = yield* Batcher.make({
      // a lane per key and listener: a busy account batches its own requests, and never queues another's
      key: (request: Request) => `${request.keyHash}/${request.environment}`,
      process: (_lane, requests) => admitBatch(requests[0]!.keyHash, requests[0]!.environment, requests)
    })

    const touch = (keyId: string, now: number) =>
      Effect.suspend(() => {
        const last = lastTouched.get(keyId)
        if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return Effect.void
        lastTouched.set(keyId, now)
        return FiberSet.run(touches, repo.touchKeys([keyId], new Date(now)).pipe(Effect.ignoreLogged)).pipe(Effect.asVoid)
      })

    const submit = (request: Request) =>
      Effect.tap(batcher.submit(request), (result) => touch(result.admitted.principal.keyId, request.at))

    const admitKeyHash = (keyHash: string, environment: Environment) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) =>
        Effect.map(submit({ keyHash, environment, at }), (result) => result.admitted))

    /** Fails with `InvalidKey` (401) or `LimitReached` on the `requests` meter (429). */
    const admit = (rawKey: string | undefined, environment: Environment): Effect.Effect<Admitted, InvalidKey | LimitReached> =>
      Effect.flatMap(keyHashOf(rawKey), (keyHash) => admitKeyHash(keyHash, environment))

    return {
      admit,
      /** `admit` for a key already hashed. */
      admitKeyHash,
      /**
       * `admit` for a server request (`source` is the server's own request object), unless it was
       * admitted already and handed over: then it is not counted twice.
       */
      admitRequest: (source: unknown, rawKey: string | undefined, environment: Environment) => {
        const admitted = typeof source === "object" && source !== null ? handedOver.get(source) : undefined
        return admitted === undefined ? admit(rawKey, environment) : Effect.succeed(admitted)
      },
      /** Hands a request admitted here (with nothing charged) over to whoever serves it next. */
      handOver: (source: object, admitted: Admitted) => void handedOver.set(source, admitted),
      /** The account this key showed last in this process, if any (a hint: see `admitAndCharge`). */
      knownAccount: (keyHash: string): KnownAccount | undefined => known.get(keyHash),
      /**
       * Admits a request and, in the same round trip and commit, charges `prepared` if the account
       * is still as `prepared.expected` showed it. Fails as `admit` does (nothing charged then).
       */
      admitAndCharge: (
        keyHash: string,
        environment: Environment,
        prepared: PreparedConsumption
      ): Effect.Effect<AdmittedAndCharged, InvalidKey | LimitReached> =>
        Effect.flatMap(Clock.currentTimeMillis, (at) =>
          submit({ keyHash, environment, at, prepared }))
    }
  }),
  dependencies: [AccountsRepo.Default]
}) {}
