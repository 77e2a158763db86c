/**
 * Admission of every /v1 and /v2 request: the API key is checked and the request counted against
 * the account's per-minute limit (shared by all keys, per environment), before anything else.
 *
 * Concurrent requests of a listener are admitted in batches, in one round trip of a prepared
 * statement (the SQL client prepares it once per connection) and one commit, whatever their keys:
 * the `vda_admit_charge` database function looks each key up and counts its requests (exact
 * across processes through the counters' row locks, see `vda_consume`). A request whose
 * consumption is already known can be charged in the same round trip and commit, provided the
 * account is still as the caller last saw it.
 */
import { PgTypes } from "@effect/sql-pg"
import { Clock, Context, Effect, FiberSet, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as Batcher from "../platform/batching/Batcher.js"
import { perText } from "../platform/caching/PerObject.js"
import type * as Errors from "../platform/http/Errors.js"
import { METER } from "../platform/contract/MeterNames.js"
import type { PerEnvironment } from "../platform/http/PerEnvironment.js"
import { Environment } from "../platform/http/RequestContext.js"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import { isLockTimeout } from "../platform/db/Database.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { KeyLookupRow } from "../principal/AccountRows.js"
import { InvalidKey, keyHashOf, principalOf } from "../principal/Authentication.js"
import type { Principal } from "../principal/Domain.js"
import { KeyUse } from "./KeyUse.js"
import { countCharge, countRateLimited } from "./Outcomes.js"
import { type Charge, LimitReached, limitReachedBy, nullableArray, type PlainConsumption } from "./Metering.js"
import { minuteOf, type Period } from "./Periods.js"
import { admitChargeArguments } from "./sql/vda_admit_charge.js"
import { typeOf } from "./sql/vda_admit_charge_in_order.js"
import { setBounded } from "../platform/caching/Bounded.js"

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
  /** False when there was nothing to charge, or the account changed since `expected`: nothing was charged. */
  readonly charged: boolean
  /** The allowance that refused the charge (nothing was charged then), or undefined. */
  readonly refused: LimitReached | undefined
}

export interface AdmissionRequest {
  readonly keyHash: string
  readonly environment: Environment
  readonly at: number
  /**
   * Charges made for the account as `expected` showed it. Always present, undefined when none: every
   * request has one shape, so the batch's code, shared by every route, stays monomorphic.
   */
  readonly prepared: PreparedConsumption | undefined
}

/**
 * A request whose handler admits it (the request pipeline left its admission pending, see
 * `src/Http.ts`): the handler prepares its answer for the `expected` account, and charges it
 * with the admission, in one round trip. A request is admitted once: later calls get the first
 * answer. Failures are the contract's 401 and 429.
 */
export interface PendingAdmission {
  readonly expected: KnownAccount
  readonly admitted: boolean
  readonly admit: (prepared?: PreparedConsumption) => Effect.Effect<AdmittedAndCharged, Errors.ApiError>
}

/** The current request's pending admission, if its handler admits it. */
export class RequestAdmission extends Context.Reference<PendingAdmission | undefined>("vda/RequestAdmission", {
  defaultValue: () => undefined
}) {}

/** `lastUsedAt` is a recent-activity hint, written at most once a minute per key and process. */
const TOUCH_INTERVAL_MS = 60_000
/** The debug line of a failed touch (Effect 3's `ignoreLogged`'s). */
const IGNORED = "An error was silently ignored because it is not anticipated to be useful"
/**
 * Shared lanes per listener, keys spread over them by hash: each has one batch in flight. Two keep
 * a second batch running while one commits; more split the same requests into smaller batches,
 * each paying its own round trip and commit (four gave a fifth less than two on many accounts).
 */
const SHARED_LANES = 2
/** Accounts kept per process, by key hash (a hint only: the database checks the fingerprint). */
const KNOWN_MAX = 10_000

/** `vda_admit_charge`'s answer (names as they are); null for an unknown or revoked key. */
export const BatchAnswer = Schema.Struct({
  key_environment: Environment,
  fingerprint: Schema.String,
  /** Null when it is the account the batch expected. */
  account: Schema.NullOr(KeyLookupRow),
  /** Whether the charges of the requests prepared for the expected account were decided. */
  charged: Schema.Boolean,
  /**
   * When the whole batch fitted: each window's per-minute count before it. Every request was
   * admitted and nothing refused.
   */
  window_used: Schema.optional(Schema.Array(NonNegativeInt)),
  /** When it did not, per request in order. (Neither is there when the key belongs to the other environment.) */
  admitted: Schema.optional(Schema.Array(Schema.Boolean)),
  used: Schema.optional(Schema.Array(NonNegativeInt)),
  /** The 1-based position, in its request, of the charge an allowance refused, or 0. */
  refused: Schema.optional(Schema.Array(NonNegativeInt)),
  refused_used: Schema.optional(Schema.Array(NonNegativeInt))
})
export type BatchAnswer = typeof BatchAnswer.Type

/** A key's answer in a batch: as `vda_admit_charge`'s (null: no such key). */
const KeyAnswer = Schema.NullOr(BatchAnswer)

/** A request of a shared batch that gave up on a lock: it goes to its key's own lane. */
const BUSY = Symbol("busy")

/** What a batch's answer decided for its request `i`. */
export interface RequestOutcome {
  readonly admitted: boolean
  /** The per-minute count after the request, or before it when it was refused. */
  readonly used: number
  /** As in `BatchAnswer.refused`. */
  readonly refused: number
  readonly refusedUsed: number
}

/** Request `i`'s outcome in `answer`, which must hold the batch's decision (the key's environment matched). */
export const outcomeOf = (answer: BatchAnswer, batch: Batch, i: number): RequestOutcome =>
  answer.admitted === undefined
    ? { admitted: true, used: answer.window_used![batch.requestWindowIndex[i]! - 1]! + batch.requestRank[i]!, refused: 0, refusedUsed: 0 }
    : { admitted: answer.admitted[i]!, used: answer.used![i]!, refused: answer.refused![i]!, refusedUsed: answer.refused_used![i]! }

/** The consumption `request` was prepared with, if it was prepared for the account as `expected` shows it. */
const preparedFor = ({ prepared }: AdmissionRequest, expected: KnownAccount | undefined) =>
  prepared !== undefined && prepared.expected.fingerprint === expected?.fingerprint ? prepared.consumption : undefined

/** How many values a batch searches through before it keeps a map of them, and makes room for at first. */
const FEW = 8

/**
 * Values numbered from 1 in the order they first appear. Windows and counters, compared by `same`,
 * are always few and searched; plates and other values compared as they are, most often one per
 * batch, are searched until there are `FEW`, then found through a map. The array has room for a
 * few values from the start (an array grown from empty takes room for 17), trimmed by `done`.
 */
class Numbered<A> {
  readonly values: Array<A>
  private count = 0
  private indexes: Map<A, number> | undefined = undefined
  /** Whether the last `indexOf` numbered a value not seen before. */
  added = false
  constructor(room: number, private readonly same: ((a: A, b: A) => boolean) | undefined) {
    this.values = new Array(Math.min(room, FEW))
  }
  indexOf(value: A): number {
    if (this.indexes !== undefined) {
      const index = this.indexes.get(value)
      this.added = index === undefined
      if (index !== undefined) return index
      this.indexes.set(value, this.count + 1)
    } else {
      this.added = false
      for (let i = 0; i < this.count; i++) if (this.same === undefined ? this.values[i] === value : this.same(this.values[i]!, value)) return i + 1
      this.added = true
      if (this.count + 1 === FEW && this.same === undefined) {
        this.indexes = new Map()
        for (let i = 0; i < this.count; i++) this.indexes.set(this.values[i]!, i + 1)
        this.indexes.set(value, this.count + 1)
      }
    }
    this.values[this.count] = value
    return ++this.count
  }
  get size() {
    return this.count
  }
  done(): Array<A> {
    this.values.length = this.count
    return this.values
  }
}

const sameInstant = (a: Date, b: Date) => a.getTime() === b.getTime()

/**
 * Counters by meter and period. A counter keeps its first charge's limit: a batch's charges are
 * all prepared for one account (one fingerprint), whose allowances set the limits.
 */
const sameCounter = (a: Charge, b: Charge) => a.meter === b.meter && sameInstant(a.period.start, b.period.start)

/** Integers as a PostgreSQL array text. */
const integers = (values: ReadonlyArray<number>) => `{${values.join(",")}}`

const NEEDS_ESCAPE = /["\\]/
const quoted = (text: string) => `"${NEEDS_ESCAPE.test(text) ? text.replace(/["\\]/g, "\\$&") : text}"`

/** An array as PostgreSQL reads it, each element written by `element` (quoted where it may need it). */
const arrayText = <A>(values: ReadonlyArray<A>, element: (value: A) => string) => {
  let elements = ""
  for (let i = 0; i < values.length; i++) elements = i === 0 ? element(values[i]!) : `${elements},${element(values[i]!)}`
  return `{${elements}}`
}

/**
 * Elements written once and remembered: every batch writes the same few windows, periods and
 * counter names (for each of its keys, in a shared batch), and `toISOString` costs more than the
 * rest of an element.
 */
const instantText = perText((at: number) => `"${new Date(at).toISOString()}"`, 1_024)
const meterText = perText(quoted)
const instantElement = (at: Date) => instantText(at.getTime())
const meterElement = (counter: Charge) => meterText(counter.meter)
const periodElement = (counter: Charge) => instantElement(counter.period.start)
const limitElement = ({ limit }: Charge) => limit === undefined || limit === null ? "NULL" : `${limit}`

/**
 * A batch as `vda_admit_charge` takes it: its minute windows, counters and distinct values once
 * each, each request's window, and the charges of the requests prepared for `expected` (others,
 * prepared for an account since changed, are only admitted). Then its totals, by which the
 * database decides a batch that fits as a whole: each window's requests, each counter's plain
 * charges, and each distinct value once per counter (with its first charge's amount).
 *
 * The arguments are written as PostgreSQL array texts, in the order of `vda_admit_charge`'s
 * arguments after the key's three: the same texts go alone (`ADMIT_CHARGE`) or beside other keys'
 * (`ADMIT_KEYS`).
 */
export const batchOf = (requests: ReadonlyArray<AdmissionRequest>, expected: KnownAccount | undefined) => {
  let charges = 0
  for (let i = 0; i < requests.length; i++) charges += preparedFor(requests[i]!, expected)?.charges.length ?? 0
  const windows = new Numbered<Date>(requests.length, sameInstant)
  const counters = new Numbered<Charge>(charges, sameCounter)
  const values = new Numbered<string>(charges, undefined)
  // each (counter, value) once, as one number: both are numbered from 1, far below 2^20
  const distinct = new Numbered<number>(charges, undefined)
  const windowCount = new Array<number>(Math.min(requests.length, FEW))
  const counterTotal = new Array<number>(Math.min(charges, FEW))
  const requestPeriod = new Array<Period>(requests.length)
  const requestWindow = new Array<number>(requests.length)
  const requestRank = new Array<number>(requests.length)
  const chargeRequest = new Array<number>(charges)
  const chargeCounter = new Array<number>(charges)
  const chargeAmount = new Array<number>(charges)
  const chargeValue = new Array<number>(charges)
  const distinctCounter = new Array<number>(charges)
  const distinctValue = new Array<number>(charges)
  const distinctAmount = new Array<number>(charges)
  let c = 0
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i]!
    const window = minuteOf(request.at)
    const w = windows.indexOf(window.start)
    requestPeriod[i] = window
    requestWindow[i] = w
    requestRank[i] = windowCount[w - 1] = (windows.added ? 0 : windowCount[w - 1]!) + 1
    const prepared = preparedFor(request, expected)?.charges
    for (let j = 0; prepared !== undefined && j < prepared.length; j++) {
      const charge = prepared[j]!
      const counter = counters.indexOf(charge)
      if (counters.added) counterTotal[counter - 1] = 0
      chargeRequest[c] = i + 1
      chargeCounter[c] = counter
      chargeAmount[c] = charge.amount
      if (charge.distinctValue === undefined) {
        chargeValue[c++] = 0
        counterTotal[counter - 1]! += charge.amount
        continue
      }
      const value = values.indexOf(charge.distinctValue)
      chargeValue[c++] = value
      const pair = distinct.indexOf(counter * 1_048_576 + value)
      if (!distinct.added) continue
      distinctCounter[pair - 1] = counter
      distinctValue[pair - 1] = value
      distinctAmount[pair - 1] = charge.amount
    }
  }
  const pairs = distinct.size
  distinctCounter.length = distinctValue.length = distinctAmount.length = pairs
  windowCount.length = windows.size
  counterTotal.length = counters.size
  const counted = counters.done()
  return {
    requestPeriod,
    /** Each request's window (1-based) and its rank there (1 for the window's first request). */
    requestWindowIndex: requestWindow,
    requestRank,
    /** `vda_admit_charge`'s arguments after `p_expected`, in order. */
    arrays: [
      arrayText(windows.done(), instantElement),
      integers(requestWindow),
      arrayText(counted, meterElement),
      arrayText(counted, periodElement),
      arrayText(counted, limitElement),
      arrayText(values.done(), quoted),
      integers(chargeRequest),
      integers(chargeCounter),
      integers(chargeAmount),
      integers(chargeValue),
      integers(windowCount),
      integers(counterTotal),
      integers(distinctCounter),
      integers(distinctValue),
      integers(distinctAmount)
    ]
  }
}

/** A batch as `batchOf` answers it. */
export type Batch = ReturnType<typeof batchOf>

/** `fn` called with `vda_admit_charge`'s arguments as parameters, each cast to `typeAt(its type)`. */
const admitStatement = (fn: string, result: string, typeAt: (type: string) => string = (type) => type) =>
  `select ${fn}(${
    admitChargeArguments.map((argument, i) => typeAt(typeOf(argument)) === "text" ? `$${i + 1}` : `$${i + 1}::${typeAt(typeOf(argument))}`)
      .join(", ")
  }) as ${result}`

/** One batch's admission and charges: one call, one round trip, one commit. */
export const ADMIT_CHARGE = admitStatement("vda_admit_charge", "answer")

/** A batch of a shared lane that has one key: as `ADMIT_CHARGE`, giving up on a lock soon (`vda_admit_charge_shared`). */
export const ADMIT_CHARGE_SHARED = admitStatement("vda_admit_charge_shared", "answer")

/** The batches of several keys in one statement: each argument of `ADMIT_CHARGE` as an array of one text per key. */
export const ADMIT_KEYS = admitStatement("vda_admit_keys", "answers", () => "text[]")

/** `ADMIT_CHARGE`'s parameters for a batch of one key's requests on one listener: texts, or null. */
export const admitChargeParameters = (
  keyHash: string,
  environment: Environment,
  expected: KnownAccount | undefined,
  batch: Batch
): Array<string | null> => [keyHash, environment, expected?.fingerprint ?? null, ...batch.arrays]

/** `ADMIT_KEYS`'s parameters for the keys' `admitChargeParameters`: per argument, its text for every key. */
export const admitKeysParameters = (keys: ReadonlyArray<ReadonlyArray<string | null>>) =>
  // typed as text[]: an argument may be null for every key (no expected account yet)
  keys[0]!.map((_, i) => nullableArray(keys.map((key) => key[i] ?? null), PgTypes.OID.text))

const make = Effect.gen(function*() {
  const keyUse = yield* KeyUse
  const sql = yield* SqlClient.SqlClient
  const touches = yield* FiberSet.make()
  const lastTouched = new Map<string, number>()
  const known = new Map<string, KnownAccount>()
  // decoded once per batch: one row, the account in it only when it changed
  const admitCharge = SqlRows.single("vda_admit_charge", Schema.Struct({ answer: KeyAnswer }))
  const admitChargeShared = SqlRows.single("vda_admit_charge_shared", Schema.Struct({ answer: KeyAnswer }))
  const admitKeys = SqlRows.single("vda_admit_keys", Schema.Struct({ answers: Schema.Array(KeyAnswer) }))

  /** The account a row shows: the one the batch expected, or the one it sent back (then remembered). */
  const principalIn = (keyHash: string, expected: KnownAccount | undefined, answer: BatchAnswer): Principal => {
    if (answer.account === null) return expected!.principal
    const principal = principalOf(answer.account)
    setBounded(known, KNOWN_MAX, keyHash, { principal, fingerprint: answer.fingerprint })
    return principal
  }

  const decide = (
    request: AdmissionRequest,
    i: number,
    batch: Batch,
    principal: Principal,
    answer: BatchAnswer,
    consumption: PlainConsumption | undefined
  ): Result.Result<AdmittedAndCharged, InvalidKey | LimitReached> => {
    if (answer.key_environment !== request.environment) return Result.fail(new InvalidKey({ reason: "other_environment" }))
    const limit = principal.entitlements.requestsPerMinute
    const window = batch.requestPeriod[i]!
    const outcome = outcomeOf(answer, batch, i)
    const used = outcome.used
    if (!outcome.admitted) {
      countRateLimited(request.environment)
      return Result.fail(new LimitReached({ meter: METER.requests, limit: limit ?? 0, used, resetAt: window.end }))
    }
    const charged = consumption !== undefined && answer.charged
    const refusedAt = charged ? outcome.refused : 0
    const refused = refusedAt > 0 ? limitReachedBy(consumption!.charges[refusedAt - 1]!, outcome.refusedUsed) : undefined
    if (charged) countCharge(request.environment, refused)
    return Result.succeed({
      admitted: {
        principal,
        limit,
        remaining: limit === null ? null : Math.max(0, limit - used),
        resetAt: window.end,
        resetInSeconds: Math.max(0, Math.ceil((window.end.getTime() - request.at) / 1000))
      },
      charged,
      refused
    })
  }

  /** A batch of one key's requests on one listener: what to send, and what its answer decides. */
  const keyBatchOf = (keyHash: string, environment: Environment, requests: ReadonlyArray<AdmissionRequest>) => {
    const expected = known.get(keyHash)
    const batch = batchOf(requests, expected)
    return {
      parameters: () => admitChargeParameters(keyHash, environment, expected, batch),
      /** Each request's result; the key joins `used` when its use is to be recorded. */
      decide: (answer: BatchAnswer | null, used: Array<string>) => {
        if (answer === null) {
          known.delete(keyHash)
          return requests.map(() => Result.fail(new InvalidKey({ reason: "unknown" })))
        }
        const principal = principalIn(keyHash, expected, answer)
        const results = requests.map((request, i) => decide(request, i, batch, principal, answer, preparedFor(request, expected)))
        if (results.some(Result.isSuccess) && dueForTouch(principal.keyId, requests.at(-1)!.at)) used.push(principal.keyId)
        return results
      }
    }
  }

  // no span of their own, as when they were named statements on the pool: each batch would be a trace
  const untraced = <A, E, R>(statement: Effect.Effect<A, E, R>) => statement.pipe(Effect.withTracerEnabled(false), Effect.orDie)

  /** A key's own lane: its batch waits for its counters' locks. */
  const admitBatch = (keyHash: string, environment: Environment, requests: ReadonlyArray<AdmissionRequest>) => {
    const keyBatch = keyBatchOf(keyHash, environment, requests)
    return Effect.map(untraced(admitCharge(sql.unsafe(ADMIT_CHARGE, keyBatch.parameters()))), ({ answer }) => {
      const used: Array<string> = []
      const results = keyBatch.decide(answer, used)
      touch(used, requests)
      return results
    })
  }

  /**
   * A shared lane of a listener: its keys' requests in one statement and one commit. When a lock
   * keeps it waiting (a key's counters held elsewhere), the statement gives up, undone, and every
   * request of the batch is `BUSY` (see `vda_admit_charge_shared`).
   */
  const admitShared = (environment: Environment, requests: ReadonlyArray<AdmissionRequest>) => {
    const indexesByKey = new Map<string, Array<number>>()
    requests.forEach((request, i) => {
      const indexes = indexesByKey.get(request.keyHash)
      if (indexes === undefined) indexesByKey.set(request.keyHash, [i])
      else indexes.push(i)
    })
    const keys = [...indexesByKey]
    const batches = keys.map(([keyHash, indexes]) => keyBatchOf(keyHash, environment, indexes.map((i) => requests[i]!)))
    const answers = batches.length === 1
      ? Effect.map(admitChargeShared(sql.unsafe(ADMIT_CHARGE_SHARED, batches[0]!.parameters())), ({ answer }) => [answer])
      : Effect.map(
        admitKeys(sql.unsafe(ADMIT_KEYS, admitKeysParameters(batches.map((batch) => batch.parameters())))),
        (row) => row.answers
      )
    const decided = Effect.map(answers, (answers) => {
      const results: Array<Result.Result<AdmittedAndCharged | typeof BUSY, InvalidKey | LimitReached>> = new Array(requests.length)
      const used: Array<string> = []
      keys.forEach(([, indexes], k) => {
        const decided = batches[k]!.decide(answers[k]!, used)
        indexes.forEach((i, j) => results[i] = decided[j]!)
      })
      touch(used, requests)
      return results
    })
    return untraced(Effect.catchIf(decided, isLockTimeout, () => Effect.succeed(requests.map(() => Result.succeed(BUSY)))))
  }

  /** A key's own lane on a listener. */
  const ownLaneOf = (request: AdmissionRequest) => `${request.keyHash}/${request.environment}`
  const ownLanes = yield* Batcher.make({
    key: ownLaneOf,
    process: (_lane, requests) => admitBatch(requests[0]!.keyHash, requests[0]!.environment, requests)
  })
  // each listener's lanes: `production/0`…
  const sharedLaneIn = (environment: Environment) => Batcher.spreadOver(SHARED_LANES, `${environment}/`)
  const sharedLaneOf: PerEnvironment<(keyHash: string) => string> = { production: sharedLaneIn("production"), sandbox: sharedLaneIn("sandbox") }
  const sharedLanes = yield* Batcher.make({
    key: (request: AdmissionRequest) => sharedLaneOf[request.environment](request.keyHash),
    process: (_lane, requests) => admitShared(requests[0]!.environment, requests)
  })

  /** Requests in each key's own lane now, by key and listener: the key's next requests join them. */
  const inOwnLane = new Map<string, number>()
  const isInOwnLane = (request: AdmissionRequest) => inOwnLane.size > 0 && inOwnLane.has(ownLaneOf(request))
  const viaOwnLane = (request: AdmissionRequest) =>
    Effect.suspend(() => {
      const lane = ownLaneOf(request)
      inOwnLane.set(lane, (inOwnLane.get(lane) ?? 0) + 1)
      return ownLanes.submit(request).pipe(Effect.ensuring(Effect.sync(() => {
        const left = inOwnLane.get(lane)! - 1
        if (left === 0) inOwnLane.delete(lane)
        else inOwnLane.set(lane, left)
      })))
    })
  /** A shared lane's result: a request that gave up on a lock goes to its key's own lane. */
  const orOwnLane = (request: AdmissionRequest) => (result: AdmittedAndCharged | typeof BUSY) =>
    result === BUSY ? viaOwnLane(request) : Effect.succeed(result)

  /**
   * Requests are admitted in a shared lane of their listener, many keys per round trip; a key whose
   * counters are held goes to its own lane until it has no request left there, so that no account
   * holds back another's.
   */
  const submit = (request: AdmissionRequest) =>
    isInOwnLane(request) ? viaOwnLane(request) : Effect.flatMap(sharedLanes.submit(request), orOwnLane(request))

  /**
   * `submit`, queued now; the effect it answers awaits the admission. A request in its key's own
   * lane (rare: its counters were held elsewhere) is submitted when awaited.
   */
  const queue = (request: AdmissionRequest) =>
    isInOwnLane(request)
      ? Effect.succeed(viaOwnLane(request))
      : Effect.map(sharedLanes.queue(request), (admitted) => Effect.flatMap(admitted, orOwnLane(request)))

  /** Whether the use of `keyId` at `at` is to be recorded (then it counts as recorded). */
  const dueForTouch = (keyId: string, at: number) => {
    const last = lastTouched.get(keyId)
    if (last !== undefined && at - last < TOUCH_INTERVAL_MS) return false
    lastTouched.set(keyId, at)
    return true
  }

  const runTouch = yield* FiberSet.runtime(touches)<never>()
  /** Records the `used` keys of a batch, at its last request: one statement, off the requests' path. */
  const touch = (used: ReadonlyArray<string>, requests: ReadonlyArray<AdmissionRequest>) => {
    if (used.length === 0) return
    runTouch(keyUse.touch(used, new Date(requests.at(-1)!.at)).pipe(Effect.ignoreCause({ log: "Debug", message: IGNORED })))
  }

  /**
   * Admits a request of the key `keyHash`, and charges `prepared` in the same round trip when the
   * account is still as it was prepared for. Fails with `InvalidKey` (401) or `LimitReached` on
   * the `requests` meter (429).
   */
  const admitCharging = (keyHash: string, environment: Environment, prepared?: PreparedConsumption) =>
    Clock.clockWith((clock) => {
      const at = clock.currentTimeMillisUnsafe()
      return submit({ keyHash, environment, at, prepared })
    })

  /**
   * `admitCharging` with nothing to charge, queued now: the effect it answers awaits the admission
   * (the caller reads meanwhile, on its own fiber).
   */
  const queueAdmission = (keyHash: string, environment: Environment) =>
    Clock.clockWith((clock) => queue({ keyHash, environment, at: clock.currentTimeMillisUnsafe(), prepared: undefined }))

  /** Fails with `InvalidKey` (401) or `LimitReached` on the `requests` meter (429). */
  const admit = (rawKey: string | undefined, environment: Environment): Effect.Effect<Admitted, InvalidKey | LimitReached> =>
    Effect.flatMap(Effect.fromResult(keyHashOf(rawKey)), (keyHash) =>
      Effect.map(admitCharging(keyHash, environment), (result) => result.admitted))

  /** The account the key `keyHash` showed at its last admission here, if it was of `environment`. */
  const expected = (keyHash: string, environment: Environment): KnownAccount | undefined => {
    const account = known.get(keyHash)
    return account?.principal.environment === environment ? account : undefined
  }

  return { admit, admitCharging, queueAdmission, expected }
})

export class Admission extends Context.Service<Admission, Effect.Success<typeof make>>()("vda/Admission", { make }) {
  /** Needs the accounts' `KeyUse` (`accounts/ForMetering.ts`). */
  static readonly layer = Layer.effect(Admission, make)
}
