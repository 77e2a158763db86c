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
import { type ChargeOutcome, type Decision, decisionOf, LimitReached, type PlainConsumption } from "./Metering.js"
import { minuteOf } from "./Periods.js"

export interface Admitted {
  readonly principal: Principal
  /** Null when the plan has no per-minute limit. */
  readonly limit: number | null
  readonly remaining: number | null
  readonly resetAt: Date
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
  /** The account as this process knows it, if it does: the database sends it back only if it changed. */
  readonly known: KnownAccount | undefined
  readonly consumption?: PlainConsumption
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
  /** Null when it is the account the request expected. */
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

/** The batch's charges as `vda_admit_consume` takes them: one entry per charge, requests in order. */
const chargesOf = (requests: ReadonlyArray<Request>) => {
  const charges = requests.flatMap((request, i) =>
    request.consumption ? request.consumption.charges.map((charge) => ({ request: i + 1, charge })) : []
  )
  return {
    request: charges.map((c) => c.request),
    meter: charges.map((c) => c.charge.meter),
    periodStart: charges.map((c) => c.charge.period.start.toISOString()),
    amount: charges.map((c) => c.charge.amount),
    limited: charges.map((c) => c.charge.limit !== undefined),
    limit: charges.map((c) => c.charge.limit ?? null),
    distinct: charges.map((c) => c.charge.distinctValue ?? null)
  }
}

export class Admission extends Effect.Service<Admission>()("vda/Admission", {
  scoped: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    // rows as they come: the few columns are read by name, and most rows carry no account
    const raw = (yield* SqlClient.SqlClient).withoutTransforms()
    const touches = yield* FiberSet.make()
    const lastTouched = new Map<string, number>()
    const known = new Map<string, KnownAccount>()
    const handedOver = new WeakMap<object, Admitted>()

    /** The account a row shows: the one the request knew, or the one it sent back (then remembered). */
    const principalFor = (request: Request, row: AdmitRow): Principal => {
      if (row.account === null) return request.known!.principal
      if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value!)
      const principal = principalOf(row.account)
      known.set(request.keyHash, { principal, fingerprint: row.fingerprint })
      return principal
    }

    const decide = (request: Request, row: AdmitRow | undefined): Either.Either<AdmittedAndCharged, InvalidKey | LimitReached> => {
      if (row === undefined) {
        known.delete(request.keyHash)
        return Either.left(new InvalidKey({ reason: "unknown" }))
      }
      const principal = principalFor(request, row)
      if (row.key_environment !== request.environment) return Either.left(new InvalidKey({ reason: "other_environment" }))
      const limit = principal.entitlements.requestsPerMinute
      const window = minuteOf(request.at)
      if (!row.admitted) {
        return Either.left(new LimitReached({ meter: "requests", limit: limit ?? 0, used: row.used, resetAt: window.end }))
      }
      return Either.right({
        admitted: { principal, limit, remaining: limit === null ? null : Math.max(0, limit - row.used), resetAt: window.end },
        decision: request.consumption && row.charged ? decisionOf(request.consumption.charges, outcomesOf(row)) : undefined
      })
    }

    const admitBatch = (requests: ReadonlyArray<Request>) => {
      const charges = chargesOf(requests)
      return Effect.map(
        raw<AdmitRow>`
          select * from vda_admit_consume(${requests.map((r) => r.keyHash)}::text[], ${requests.map((r) => r.environment)}::text[],
            ${requests.map((r) => minuteOf(r.at).start.toISOString())}::timestamptz[],
            ${requests.map((r) => r.known?.fingerprint ?? null)}::text[],
            ${charges.request}::integer[], ${charges.meter}::text[], ${charges.periodStart}::timestamptz[],
            ${charges.amount}::integer[], ${charges.limited}::boolean[], ${charges.limit}::integer[], ${charges.distinct}::text[])`,
        (rows) => {
          const byRequest = new Map(rows.map((row) => [row.request, row]))
          return requests.map((request, i) => decide(request, byRequest.get(i + 1)))
        }
      ).pipe(Effect.orDie)
    }

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

    const submit = (request: Request) =>
      Effect.tap(batcher.submit(request), (result) => touch(result.admitted.principal.keyId, request.at))

    const admitKeyHash = (keyHash: string, environment: Environment) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) =>
        Effect.map(submit({ keyHash, environment, at, known: known.get(keyHash) }), (result) => result.admitted))

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
          submit({ keyHash, environment, at, known: prepared.expected, consumption: prepared.consumption }))
    }
  }),
  dependencies: [AccountsRepo.Default]
}) {}
