/**
 * `vda_admit_charge` decides a batch from its totals when the whole batch fits its limits, and
 * hands it to `vda_admit_charge_in_order` when it does not. Both must decide the same and leave
 * the same counters: over random batches (per-minute limits, quotas near their use, repeated and
 * already counted plates, two minute windows, stale fingerprints), built as the server builds
 * them (`batchOf`), twin accounts seeded alike get one function each, and each request's outcome
 * as the server reads it (`outcomeOf`) and the counters are compared.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { Principal } from "../../src/principal/Domain.js"
import {
  ADMIT_CHARGE,
  ADMIT_CHARGE_SHARED,
  ADMIT_KEYS,
  admitChargeParameters,
  admitKeysParameters,
  type AdmissionRequest,
  type BatchAnswer,
  batchOf,
  outcomeOf
} from "../../src/metering/Admission.js"
import { makeCharge } from "../../src/metering/Metering.js"
import { dayOf, monthOf } from "../../src/metering/Periods.js"
import { isLockTimeout } from "../../src/platform/db/Database.js"
import { sha256Hex } from "../../src/platform/ids/Ids.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const RUNS = Number(process.env.FUZZ_RUNS ?? 60)
const BA = "America/Argentina/Buenos_Aires"
const AT = Date.parse("2026-11-21T12:00:30Z")
const WINDOWS = [new Date(AT - 30_000), new Date(AT + 30_000)]
const MONTH_PERIOD = monthOf(AT, BA)
const DAY_PERIOD = dayOf(AT, BA)
const MONTH = MONTH_PERIOD.start
const DAY = DAY_PERIOD.start
const PLATES = ["AAA111", "BBB222", "CCC333"]
/** More plates, one at most per request: enough for a batch to count more distinct values than it searches through. */
const MORE_PLATES = ["DDD001", "DDD002", "DDD003", "DDD004", "DDD005", "DDD006", "DDD007", "DDD008", "DDD009", "DDD010", "DDD011", "DDD012"]

const ServicesLive = Accounts.layer.pipe(Layer.provideMerge(freshDatabaseLayer(4)))

interface Charge {
  readonly meter: "plate_queries" | "unique_plates" | "v2:plate_queries"
  readonly amount: number
  readonly plate: string
}

const scenario = fc.record({
  rpm: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
  plateLimit: fc.option(fc.integer({ min: 0, max: 10 }), { nil: null }),
  uniqueLimit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
  usedRequests: fc.integer({ min: 0, max: 4 }),
  usedPlates: fc.integer({ min: 0, max: 8 }),
  seenPlates: fc.subarray(PLATES),
  stale: fc.boolean(),
  requests: fc.array(
    fc.record({
      window: fc.integer({ min: 0, max: 1 }),
      charges: fc.subarray<Charge>([
        { meter: "plate_queries", amount: 1, plate: "" },
        { meter: "plate_queries", amount: 2, plate: "" },
        { meter: "unique_plates", amount: 1, plate: "AAA111" },
        { meter: "unique_plates", amount: 1, plate: "BBB222" },
        { meter: "unique_plates", amount: 1, plate: "CCC333" },
        { meter: "v2:plate_queries", amount: 1, plate: "" }
      ]).chain((charges) =>
        fc.option(fc.constantFrom(...MORE_PLATES), { nil: undefined }).map((plate) =>
          plate === undefined ? charges : [...charges, { meter: "unique_plates" as const, amount: 1, plate }]
        )
      )
    }),
    { minLength: 1, maxLength: 12 }
  )
})

type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

const limitOf = (s: Scenario, meter: Charge["meter"]) =>
  meter === "plate_queries" ? s.plateLimit : meter === "unique_plates" ? s.uniqueLimit : null

/** An account with a key and the scenario's usage before the batch; answers the key's hash. */
const twin = (s: Scenario) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const sql = yield* SqlClient.SqlClient
    const account = yield* accounts.create({ owner: "twin", plan: "growth", timezone: BA })
    yield* accounts.setCustom(account.id, { requestsPerMinute: s.rpm })
    const { key } = yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })
    yield* sql`insert into meter_counters (account_id, environment, meter, period_start, used) values
      (${account.id}, 'production', 'requests', ${WINDOWS[0]!}, ${s.usedRequests}),
      (${account.id}, 'production', 'plate_queries', ${MONTH}, ${s.usedPlates}),
      (${account.id}, 'production', 'unique_plates', ${DAY}, ${s.seenPlates.length})`
    for (const plate of s.seenPlates) {
      yield* sql`insert into meter_distinct_values (account_id, environment, meter, period_start, value)
        values (${account.id}, 'production', 'unique_plates', ${DAY}, ${plate})`
    }
    return { id: account.id, hash: sha256Hex(key) }
  })

/** One request with one plate query in the first or the second minute, one request counted before it (at most 5). */
const onePlateQuery = (window: 0 | 1): Scenario => ({
  rpm: 5, plateLimit: null, uniqueLimit: null, usedRequests: 1, usedPlates: 0, seenPlates: [], stale: false,
  requests: [{ window, charges: [{ meter: "plate_queries", amount: 1, plate: "" }] }]
})

/** The scenario's batch as the server sends it, prepared for the account as its fingerprint shows (or a stale one). */
const batchFor = (s: Scenario, hash: string, fingerprint: string) => {
  const expected = { principal: undefined as unknown as Principal, fingerprint: s.stale ? "stale" : fingerprint }
  const requests: Array<AdmissionRequest> = s.requests.map((request) => ({
    keyHash: hash,
    environment: "production",
    at: WINDOWS[request.window]!.getTime(),
    prepared: {
      expected,
      consumption: {
        accountId: "",
        environment: "production",
        charges: request.charges.map((charge) =>
          makeCharge(
            charge.meter,
            charge.amount,
            charge.meter === "unique_plates" ? DAY_PERIOD : MONTH_PERIOD,
            limitOf(s, charge.meter),
            charge.plate === "" ? undefined : charge.plate
          ))
      }
    }
  }))
  const batch = batchOf(requests, expected)
  const parameters = admitChargeParameters(hash, "production", expected, batch)
  return { requests, batch, parameters }
}

/** The decision in arrival order alone: the per-request arguments of `vda_admit_charge`. */
const IN_ORDER = `select vda_admit_charge_in_order($1, $2, $3, $4::timestamptz[], $5::integer[], $6::text[], $7::timestamptz[],
  $8::integer[], $9::text[], $10::integer[], $11::integer[], $12::integer[], $13::integer[]) as answer`

const decide = (fn: "vda_admit_charge" | "vda_admit_charge_in_order", s: Scenario, hash: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [found] = yield* sql<{ fingerprint: string }>`select fingerprint from vda_key_account(${hash}, null)`
    const { batch, parameters, requests } = batchFor(s, hash, found!.fingerprint)
    const [row] = fn === "vda_admit_charge"
      ? yield* sql.unsafe<{ answer: BatchAnswer }>(ADMIT_CHARGE, parameters)
      : yield* sql.unsafe<{ answer: BatchAnswer }>(IN_ORDER, parameters.slice(0, 13))
    const answer = row!.answer
    return {
      keyEnvironment: answer.key_environment,
      accountSent: answer.account !== null,
      charged: answer.charged,
      outcomes: requests.map((_, i) => outcomeOf(answer, batch, i))
    }
  })

/** Each request's outcome as the server reads it, from a key's answer. */
const outcomesOf = (answer: BatchAnswer, { batch, requests }: ReturnType<typeof batchFor>) => ({
  keyEnvironment: answer.key_environment,
  accountSent: answer.account !== null,
  charged: answer.charged,
  outcomes: requests.map((_, i) => outcomeOf(answer, batch, i))
})

const fingerprintOf = (hash: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [found] = yield* sql<{ fingerprint: string }>`select fingerprint from vda_key_account(${hash}, null)`
    return found!.fingerprint
  })

/** Several keys' batches in one statement, as a listener's shared lane sends them. */
const decideTogether = (keys: ReadonlyArray<{ readonly s: Scenario; readonly hash: string }>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const batches: Array<ReturnType<typeof batchFor>> = []
    for (const { hash, s } of keys) batches.push(batchFor(s, hash, yield* fingerprintOf(hash)))
    const [row] = yield* sql.unsafe<{ answers: Array<BatchAnswer | null> }>(
      ADMIT_KEYS,
      admitKeysParameters(batches.map((batch) => batch.parameters))
    )
    return row!.answers.map((answer, k) =>
      answer === null ? answer : outcomesOf(answer, batches[k]!)
    )
  })

const state = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counters = yield* sql`select meter, period_start, used from meter_counters where account_id = ${accountId}
      order by meter, period_start`
    const values = yield* sql`select meter, value from meter_distinct_values where account_id = ${accountId} order by meter, value`
    return { counters: counters.map((c) => [c.meter, new Date(c.periodStart as string).getTime(), c.used]), values }
  })

layer(ServicesLive, { excludeTestServices: true, timeout: "120 seconds" })("batch admission by counter", (it) => {
  it.effect("a batch's arguments, read back in PostgreSQL, are its requests' windows and charges, with their totals", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const services = yield* Effect.context<SqlClient.SqlClient>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(scenario, (s) =>
            Effect.runPromiseWith(services)(Effect.gen(function*() {
              const { batch, parameters } = batchFor(s, "hash", "fingerprint")
              const [a] = yield* sql.unsafe<{
                windows: Array<Date>; requestWindow: Array<number>; meters: Array<string>; periods: Array<Date>
                limits: Array<number | null>; values: Array<string>; chargeRequest: Array<number>; chargeCounter: Array<number>
                chargeAmount: Array<number>; chargeValue: Array<number>; windowCount: Array<number>; counterTotal: Array<number>
                distinctCounter: Array<number>; distinctValue: Array<number>; distinctAmount: Array<number>
              }>(
                `select $1::timestamptz[] as windows, $2::integer[] as request_window,
                  $3::text[] as meters, $4::timestamptz[] as periods, $5::integer[] as limits, $6::text[] as values,
                  $7::integer[] as charge_request, $8::integer[] as charge_counter, $9::integer[] as charge_amount,
                  $10::integer[] as charge_value, $11::integer[] as window_count, $12::integer[] as counter_total,
                  $13::integer[] as distinct_counter, $14::integer[] as distinct_value, $15::integer[] as distinct_amount`,
                parameters.slice(3)
              )
              const time = (at: Date) => new Date(at).getTime()
              const expectedWindows = s.requests.map((request) => WINDOWS[request.window]!.getTime())
              expect(a!.requestWindow.map((w) => time(a!.windows[w - 1]!))).toEqual(expectedWindows)
              expect(new Set(a!.windows.map(time)).size).toBe(a!.windows.length)
              expect(a!.windowCount).toEqual(a!.windows.map((w) => expectedWindows.filter((at) => at === time(w)).length))
              expect(batch.requestRank).toEqual(expectedWindows.map((at, i) => expectedWindows.slice(0, i + 1).filter((x) => x === at).length))
              const sent = a!.chargeRequest.map((request, c) => {
                const counter = a!.chargeCounter[c]!
                return {
                  request: request - 1,
                  meter: a!.meters[counter - 1],
                  period: time(a!.periods[counter - 1]!),
                  limit: a!.limits[counter - 1],
                  amount: a!.chargeAmount[c],
                  plate: a!.chargeValue[c] === 0 ? "" : a!.values[a!.chargeValue[c]! - 1]
                }
              })
              const charges = s.requests.flatMap((request, i) =>
                request.charges.map((charge) => ({
                  request: i,
                  meter: charge.meter,
                  period: (charge.meter === "unique_plates" ? DAY : MONTH).getTime(),
                  limit: limitOf(s, charge.meter),
                  amount: charge.amount,
                  plate: charge.plate
                }))
              )
              expect(sent).toEqual(charges)
              const counterOf = (meter: string, period: number) => a!.meters.findIndex((m, k) => m === meter && time(a!.periods[k]!) === period)
              expect(new Set(a!.meters.map((m, k) => `${m}@${time(a!.periods[k]!)}`)).size).toBe(a!.meters.length)
              expect(new Set(a!.values).size).toBe(a!.values.length)
              expect(a!.counterTotal).toEqual(a!.meters.map((_, k) =>
                charges.filter((c) => c.plate === "" && counterOf(c.meter, c.period) === k).reduce((sum, c) => sum + c.amount, 0)
              ))
              const firsts = new Map<string, { counter: number; value: number; amount: number }>()
              for (const c of charges) {
                if (c.plate === "") continue
                const key = `${c.meter}@${c.period}@${c.plate}`
                if (!firsts.has(key)) firsts.set(key, { counter: counterOf(c.meter, c.period) + 1, value: a!.values.indexOf(c.plate) + 1, amount: c.amount })
              }
              expect(a!.distinctCounter.map((counter, d) => ({ counter, value: a!.distinctValue[d], amount: a!.distinctAmount[d] })))
                .toEqual([...firsts.values()])
            }))
          ),
          { numRuns: RUNS }
        )
      )
    }))

  it.effect("answers and counts exactly as the decision in arrival order, whether the batch fits or not", () =>
    Effect.gen(function*() {
      const services = yield* Effect.context<Accounts | SqlClient.SqlClient>()
      const seen = { refused: 0, fitting: 0 }
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(scenario, (s) =>
            Effect.runPromiseWith(services)(Effect.gen(function*() {
              const fast = yield* twin(s)
              const inOrder = yield* twin(s)
              const fastAnswer = yield* decide("vda_admit_charge", s, fast.hash)
              const inOrderAnswer = yield* decide("vda_admit_charge_in_order", s, inOrder.hash)
              expect(fastAnswer).toEqual(inOrderAnswer)
              if (inOrderAnswer.outcomes.some((outcome) => !outcome.admitted || outcome.refused > 0)) seen.refused++
              else seen.fitting++
              const [fastState, inOrderState] = [yield* state(fast.id), yield* state(inOrder.id)]
              expect(fastState).toEqual(inOrderState)
            }))
          ),
          { numRuns: RUNS }
        )
      )
      // both branches were compared: batches that fit every limit, and batches with refusals
      expect(seen.refused).toBeGreaterThan(0)
      expect(seen.fitting).toBeGreaterThan(0)
    }), 30_000 + RUNS * 50)

  it.effect("several keys in one statement are each decided and counted as alone", () =>
    Effect.gen(function*() {
      const services = yield* Effect.context<Accounts | SqlClient.SqlClient>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(scenario, { minLength: 1, maxLength: 4 }), (scenarios) =>
            Effect.runPromiseWith(services)(Effect.gen(function*() {
              const together = []
              const alone = []
              for (const s of scenarios) {
                together.push({ s, ...(yield* twin(s)) })
                alone.push({ s, ...(yield* twin(s)) })
              }
              const answers = yield* decideTogether(together)
              for (const [k, { hash, s }] of alone.entries()) {
                expect(answers[k]).toEqual(yield* decide("vda_admit_charge", s, hash))
                expect(yield* state(together[k]!.id)).toEqual(yield* state(alone[k]!.id))
              }
            }))
          ),
          { numRuns: Math.ceil(RUNS / 2) }
        )
      )
    }), 30_000 + RUNS * 100)

  it.effect("a shared batch gives up soon on a key whose counters are held, all of it undone, and is decided once they are free", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const s = onePlateQuery(0)
      const held = yield* twin(s)
      const free = yield* twin(s)
      const before = { held: yield* state(held.id), free: yield* state(free.id) }
      // another transaction holds the key's per-minute counter, as an administrator's might
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* sql`select 1 from meter_counters where account_id = ${held.id} and meter = 'requests' for update`.pipe(
        Effect.andThen(Deferred.succeed(locked, undefined)),
        Effect.andThen(Deferred.await(release)),
        sql.withTransaction,
        Effect.forkChild
      )
      yield* Deferred.await(locked)

      const together = yield* Effect.flip(decideTogether([{ s, hash: free.hash }, { s, hash: held.hash }]))
      expect(isLockTimeout(together)).toBe(true)
      const alone = batchFor(s, held.hash, yield* fingerprintOf(held.hash))
      const single = yield* Effect.flip(sql.unsafe(ADMIT_CHARGE_SHARED, alone.parameters))
      expect(isLockTimeout(single)).toBe(true)
      // the free key was decided first in that statement: undone with the rest
      expect({ held: yield* state(held.id), free: yield* state(free.id) }).toEqual(before)

      // once the lock is released, the batch is decided as any other
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const after = yield* decideTogether([{ s, hash: free.hash }, { s, hash: held.hash }])
      expect(after).toMatchObject([
        { charged: true, outcomes: [{ admitted: true, used: 2, refused: 0 }] },
        { charged: true, outcomes: [{ admitted: true, used: 2, refused: 0 }] }
      ])
      expect((yield* state(free.id)).counters).toContainEqual(["plate_queries", MONTH.getTime(), 1])
    }))

  it.effect("a shared batch creates a counter not there yet, after locking the others, as the key's own lane would", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // the key's counters exist for the first minute only: its batch is in the next one
      const s = onePlateQuery(1)
      const shared = yield* twin(s)
      const own = yield* twin(s)
      const sent = batchFor(s, shared.hash, yield* fingerprintOf(shared.hash))
      const [row] = yield* sql.unsafe<{ answer: BatchAnswer }>(ADMIT_CHARGE_SHARED, sent.parameters)
      const alone = yield* decide("vda_admit_charge", s, own.hash)
      expect(outcomesOf(row!.answer, sent)).toEqual(alone)
      expect(alone).toMatchObject({ charged: true, outcomes: [{ admitted: true, used: 1, refused: 0 }] })
      expect((yield* state(shared.id)).counters).toEqual([
        ["plate_queries", MONTH.getTime(), 1], ["requests", WINDOWS[0]!.getTime(), 1], ["requests", WINDOWS[1]!.getTime(), 1],
        ["unique_plates", DAY.getTime(), 0]
      ])
      expect((yield* state(shared.id)).counters).toEqual((yield* state(own.id)).counters)
    }))

  it.effect("a key's arguments as texts read back in PostgreSQL as the values they were", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const odd = ["a\"b", "c\\d", "e,f", "{g}", "h i", "NULL", ""]
      const limits: [number, null] = [3, null]
      const requests: Array<AdmissionRequest> = odd.map((value, i) => ({
        keyHash: "hash",
        environment: "production",
        at: WINDOWS[i % 2]!.getTime(),
        prepared: {
          expected: { principal: undefined as unknown as Principal, fingerprint: "fingerprint" },
          consumption: {
            accountId: "",
            environment: "production",
            charges: [
              makeCharge("unique_plates", 1, DAY_PERIOD, limits[0], value),
              makeCharge("plain \"counter\"", 2, MONTH_PERIOD, limits[1])
            ]
          }
        }
      }))
      const texts = admitChargeParameters("hash", "production", undefined, batchOf(requests, requests[0]!.prepared!.expected))
      const [row] = yield* sql.unsafe<
        { values: Array<string>; windows: Array<Date>; meters: Array<string>; periods: Array<Date>; limits: Array<number | null> }
      >(
        "select $1::text[] as values, $2::timestamptz[] as windows, $3::text[] as meters, $4::timestamptz[] as periods, $5::integer[] as limits",
        [texts[8], texts[3], texts[5], texts[6], texts[7]]
      )
      expect(row!.values).toEqual(odd)
      expect(row!.windows.map((at) => new Date(at).getTime())).toEqual(WINDOWS.map((at) => at.getTime()))
      expect(row!.meters).toEqual(["unique_plates", "plain \"counter\""])
      expect(row!.periods.map((at) => new Date(at).getTime())).toEqual([DAY.getTime(), MONTH.getTime()])
      expect(row!.limits).toEqual(limits)
      expect(texts[2]).toBeNull()
    }))

  it.effect("an unknown key is null; a key of the other environment is admitted nowhere and charges nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const s = { rpm: null, plateLimit: null, uniqueLimit: null, usedRequests: 0, usedPlates: 0, seenPlates: [], stale: false, requests: [] }
      const { hash, id } = yield* twin(s)
      const batch = batchFor({ ...s, stale: true, requests: [{ window: 0, charges: [{ meter: "plate_queries", amount: 1, plate: "" }] }] }, hash, "")
      const call = (keyHash: string, environment: string) =>
        sql.unsafe<{ answer: Record<string, unknown> | null }>(ADMIT_CHARGE, [keyHash, environment, ...batch.parameters.slice(2)])
          .pipe(Effect.map(([row]) => row!.answer))
      expect(yield* call(sha256Hex("vda_live_unknown"), "production")).toBeNull()
      const other = yield* call(hash, "sandbox")
      expect(other).toMatchObject({ key_environment: "production", charged: false })
      expect(other).not.toHaveProperty("admitted")
      expect(other).not.toHaveProperty("window_used")
      expect((yield* state(id)).counters).toEqual([
        ["plate_queries", MONTH.getTime(), 0], ["requests", WINDOWS[0]!.getTime(), 0], ["unique_plates", DAY.getTime(), 0]
      ])
    }))
})
