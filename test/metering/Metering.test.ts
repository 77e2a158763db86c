import { expect, layer } from "@effect/vitest"
import { Clock, Context, Effect, Exit, Layer, Redacted, Result } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Accounts } from "../../src/accounts/Accounts.js"
import { AccountsForMeteringLive } from "../../src/accounts/ForMetering.js"
import { type Consumption, makeCharge, Metering } from "../../src/metering/Metering.js"
import { dayOf, minuteOf, monthOf } from "../../src/metering/Periods.js"
import { Admission } from "../../src/metering/Admission.js"
import { pgClientLayer } from "../../src/platform/db/Database.js"
import { freshDatabase } from "../support/Postgres.js"

const BA = "America/Argentina/Buenos_Aires"
const NOV = monthOf(Date.parse("2026-11-21T12:00:00Z"), BA)
const DAY = dayOf(Date.parse("2026-11-21T12:00:00Z"), BA)

const plateCharge = (accountId: string, limit: number | null, plate?: string, uniqueLimit: number | null = null): Consumption => ({
  accountId,
  environment: "production",
  charges: [
    makeCharge("plate_queries", 1, NOV, limit),
    ...(plate === undefined ? [] : [makeCharge("unique_plates", 1, DAY, uniqueLimit, plate)])
  ]
})

class TestDatabaseUrl extends Context.Service<TestDatabaseUrl, string>()("test/DatabaseUrl") {}

const DatabaseLive = Layer.unwrap(Effect.promise(freshDatabase).pipe(
  Effect.map((url) => Layer.succeed(TestDatabaseUrl, url).pipe(Layer.merge(pgClientLayer(Redacted.make(url), 10))))
))

const ServicesLive = Layer.mergeAll(Accounts.layer, Admission.layer.pipe(Layer.provide(AccountsForMeteringLive))).pipe(
  Layer.provideMerge(Metering.layer),
  Layer.provideMerge(DatabaseLive)
)

const newAccount = (plan: "free" | "growth" = "growth") =>
  Effect.flatMap(Accounts, (accounts) => accounts.create({ owner: "meter test", plan, timezone: BA }))

const counter = (accountId: string, meter: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly used: number }>`select coalesce(sum(used), 0)::int as used from meter_counters
      where account_id = ${accountId} and meter = ${meter}`).pipe(Effect.map((rows) => rows[0]!.used))

layer(ServicesLive, { excludeTestServices: true, timeout: "60 seconds" })("consumption primitive", (it) => {
  it.effect("a batch is decided in arrival order; a consumption crossing a limit changes nothing", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const { id } = yield* newAccount()
      const decisions = yield* metering.applyBatch([
        plateCharge(id, 2, "AAA111", 1),
        plateCharge(id, 2, "AAA111", 1), // same plate: unique plates not charged again
        plateCharge(id, 3, "BBB222", 1), // the plate query fits (3) but a second unique plate does not
        plateCharge(id, 2)
      ])
      expect(decisions.map(Result.isSuccess)).toEqual([true, true, false, false])
      const [first, second, unique, plate] = decisions
      expect(Result.isSuccess(first!) && first.success.map((c) => [c.meter, c.charged, c.used])).toEqual([
        ["plate_queries", 1, 1], ["unique_plates", 1, 1]
      ])
      expect(Result.isSuccess(second!) && second.success.map((c) => [c.meter, c.charged, c.used])).toEqual([
        ["plate_queries", 1, 2], ["unique_plates", 0, 1]
      ])
      expect(Result.isFailure(unique!) && unique.failure).toMatchObject({ meter: "unique_plates", limit: 1, used: 1 })
      expect(Result.isFailure(plate!) && plate.failure).toMatchObject({ meter: "plate_queries", limit: 2, used: 2 })
      expect(yield* counter(id, "plate_queries")).toBe(2)
      expect(yield* counter(id, "unique_plates")).toBe(1)
    }))

  it.effect("null is unlimited and 0 is disabled; plain counters have no limit", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const { id } = yield* newAccount()
      const unlimited = yield* metering.applyBatch([plateCharge(id, null), plateCharge(id, null)])
      expect(unlimited.every(Result.isSuccess)).toBe(true)
      const disabled = yield* metering.applyBatch([plateCharge(id, 0)])
      expect(Result.isFailure(disabled[0]!)).toBe(true)
      const plain = yield* metering.applyBatch([{
        accountId: id, environment: "production", charges: [makeCharge("v2:plate_queries", 5, NOV)]
      }])
      expect(Result.isSuccess(plain[0]!)).toBe(true)
      expect(yield* counter(id, "v2:plate_queries")).toBe(5)
    }))

  it.effect("precheck reads without charging", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const { id } = yield* newAccount()
      yield* metering.precheck(plateCharge(id, 1, "AAA111", 1))
      yield* metering.consume(plateCharge(id, 1, "AAA111", 1))
      const refused = yield* Effect.flip(metering.precheck(plateCharge(id, 1, "AAA111", 1)))
      expect(refused).toMatchObject({ meter: "plate_queries", limit: 1, used: 1 })
      expect(yield* counter(id, "plate_queries")).toBe(1)
    }))

  it.effect("200 concurrent consumptions against a limit of 100: exactly 100 succeed", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const account = yield* newAccount()
      const exits = yield* Effect.all(
        Array.from({ length: 200 }, () => Effect.exit(metering.consume(plateCharge(account.id, 100)))),
        { concurrency: "unbounded" }
      )
      expect(exits.filter(Exit.isSuccess)).toHaveLength(100)
      const failures = exits.filter(Exit.isFailure)
      expect(failures).toHaveLength(100)
      expect(yield* counter(account.id, "plate_queries")).toBe(100)
      const [first] = failures
      const error = first && Exit.isFailure(first) ? first.cause : undefined
      expect(JSON.stringify(error)).toContain("LimitReached")
    }))

  it.effect("exact across processes: two independent pools racing on one account", () =>
    Effect.gen(function*() {
      const account = yield* newAccount()
      const url = yield* TestDatabaseUrl
      // A second Metering with its own pool and batcher, as another API process would have
      // (fresh: not the block's Metering, which the layer memo map would otherwise hand back).
      const other = yield* Layer.build(Layer.fresh(Metering.layer).pipe(Layer.provide(pgClientLayer(Redacted.make(url), 10))))
      const metering = yield* Metering
      const second = Context.get(other, Metering)
      const attempts = Array.from({ length: 150 }, (_, i) =>
        Effect.exit((i % 2 === 0 ? metering : second).consume(plateCharge(account.id, 120)))
      )
      const exits = yield* Effect.all(attempts, { concurrency: "unbounded" })
      expect(exits.filter(Exit.isSuccess)).toHaveLength(120)
      expect(yield* counter(account.id, "plate_queries")).toBe(120)
    }).pipe(Effect.scoped))

  it.effect("all or nothing: a consumption that crosses one limit charges none of its meters", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const account = yield* newAccount()
      yield* metering.consume(plateCharge(account.id, 10, "AAA111", 1))
      const rejected = yield* Effect.flip(metering.consume(plateCharge(account.id, 10, "BBB222", 1)))
      expect(rejected).toMatchObject({ _tag: "LimitReached", meter: "unique_plates", limit: 1, used: 1 })
      expect(rejected.resetAt.toISOString()).toBe(DAY.end.toISOString())
      expect(yield* counter(account.id, "plate_queries")).toBe(1)
      // the same plate again is not a new unique plate
      yield* metering.consume(plateCharge(account.id, 10, "AAA111", 1))
      expect(yield* counter(account.id, "plate_queries")).toBe(2)
      expect(yield* counter(account.id, "unique_plates")).toBe(1)
    }))

  it.effect("a distinct value counts once per period and again in the next one", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const account = yield* newAccount()
      const nextDay = dayOf(DAY.end.getTime(), BA)
      const charge = (period: typeof DAY) =>
        metering.consume({
          accountId: account.id,
          environment: "production",
          charges: [{ meter: "unique_plates", amount: 1, limit: 5, period, distinctValue: "AB123CD" }]
        })
      yield* Effect.all([charge(DAY), charge(DAY), charge(DAY)], { concurrency: "unbounded" })
      yield* charge(nextDay)
      expect(yield* counter(account.id, "unique_plates")).toBe(2)
    }))

  it.effect("environments have separate counters", () =>
    Effect.gen(function*() {
      const metering = yield* Metering
      const account = yield* newAccount()
      yield* metering.consume(plateCharge(account.id, 1))
      yield* metering.consume({ ...plateCharge(account.id, 1), environment: "sandbox" })
      const production = yield* Effect.flip(metering.consume(plateCharge(account.id, 1)))
      expect(production._tag).toBe("LimitReached")
    }))

  it.effect("requests per minute: the limit holds within a window and resets on the next minute", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-21T23:59:30Z"))
      const admission = yield* Admission
      const accounts = yield* Accounts
      const account = yield* newAccount("free") // 30 per minute
      const { key } = yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })
      const admitted = yield* Effect.all(Array.from({ length: 30 }, () => admission.admit(key, "production")), {
        concurrency: "unbounded"
      })
      expect(admitted.map((a) => a.remaining).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 30 }, (_, i) => i))
      expect(admitted[0]!.principal).toMatchObject({ accountId: account.id, environment: "production" })
      const over = yield* Effect.flip(admission.admit(key, "production"))
      expect(over).toMatchObject({ _tag: "LimitReached", meter: "requests", limit: 30, used: 30 })
      expect(over._tag === "LimitReached" && over.resetAt.toISOString()).toBe("2026-11-22T00:00:00.000Z")
      yield* TestClock.adjust("30 seconds")
      const next = yield* admission.admit(key, "production")
      expect(next).toMatchObject({ limit: 30, remaining: 29, resetAt: minuteOf(yield* Clock.currentTimeMillis).end })
      const wrongPlace = yield* Effect.flip(admission.admit(key, "sandbox"))
      expect(wrongPlace).toMatchObject({ _tag: "InvalidKey", reason: "other_environment" })
    }).pipe(Effect.provide(TestClock.layer()))) // this block runs on live services; this test on TestClock
})
