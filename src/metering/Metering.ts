/**
 * The consumption primitive: charge units to an account's meters atomically, never past a limit.
 *
 * Concurrent consumptions are batched: a batch is applied in arrival order, in one statement and
 * transaction that holds the counters' row locks (the rule itself is the `vda_consume` database
 * function), so limits are exact across requests and processes while a busy account pays one
 * round trip and one commit per batch.
 */
import { PgTypes } from "@effect/sql-pg"
import { Context, Data, Effect, Layer, Result, Schema } from "effect"
import { SqlClient, type SqlError, type Statement } from "effect/sql"
import * as Batcher from "../platform/batching/Batcher.js"
import type { MeterName } from "../platform/contract/MeterNames.js"
import type { Environment } from "../platform/http/RequestContext.js"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { countCharge } from "./Outcomes.js"
import type { Period } from "./Periods.js"

export interface Charge {
  /** Counter name: a meter with an allowance, or a plain counter (per version, per module). */
  readonly meter: string
  readonly amount: number
  readonly period: Period
  /** The allowance for this meter; null is unlimited. Undefined for plain counters. */
  readonly limit: number | null | undefined
  /** When set, the charge applies only the first time this value is seen in the period. */
  readonly distinctValue: string | undefined
}

/**
 * A charge, every field present (a field that does not apply is undefined): all charges have one
 * shape, so the code that reads them on every request (the admission's batches) stays
 * monomorphic whichever routes charged them.
 */
export const makeCharge = (
  meter: string,
  amount: number,
  period: Period,
  limit?: number | null,
  distinctValue?: string
): Charge => ({ meter, amount, period, limit, distinctValue })

export interface Consumption {
  readonly accountId: string
  readonly environment: Environment
  readonly charges: ReadonlyArray<Charge>
  /** Custom plans: the module price and included units to freeze if this opens a billing period. */
  readonly modulePricing?: { readonly period: Period; readonly unitPriceCents: number; readonly included: number }
}

/** A consumption without module pricing: only charges. */
export type PlainConsumption = Omit<Consumption, "modulePricing">

export interface ChargeResult {
  readonly meter: string
  /** Units actually charged (0 for a distinct value already seen). */
  readonly charged: number
  /** The counter after this consumption. */
  readonly used: number
  readonly limit: number | null | undefined
  readonly period: Period
}

export class LimitReached extends Data.TaggedError("LimitReached")<{
  readonly meter: MeterName
  readonly limit: number
  readonly used: number
  readonly resetAt: Date
}> {}

export type Decision = Result.Result<ReadonlyArray<ChargeResult>, LimitReached>

/** What `vda_consume` decided on one charge (1-based, in the order of its arguments). */
const ChargeRow = Schema.Struct({
  charge: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  itemOk: Schema.Boolean,
  failed: Schema.Boolean,
  used: NonNegativeInt,
  charged: NonNegativeInt
})
type ChargeRow = typeof ChargeRow.Type

/** The consumptions as `vda_consume` takes them: one entry per charge, items in order. */
const flatten = (items: ReadonlyArray<Consumption>) => ({
  charges: items.flatMap((item, index) => item.charges.map((charge) => ({ item, index, charge }))),
  pricing: items.flatMap((item, index) => (item.modulePricing ? [{ index, pricing: item.modulePricing }] : []))
})

/**
 * An array parameter whose values may all be null (no charge with a limit, or with a distinct
 * value), typed by its elements' OID: the SQL client infers an array's type from its elements, and
 * refuses an array of nulls only.
 */
export const nullableArray = (values: ReadonlyArray<number | string | null>, elementOid: number) =>
  Result.getOrThrow(PgTypes.array(values, elementOid))

/** The refusal of `charge` by its allowance, with the counter at `used`. */
export const limitReachedBy = (charge: Charge, used: number) =>
  new LimitReached({ meter: charge.meter as MeterName, limit: charge.limit ?? 0, used, resetAt: charge.period.end })

/** The decision on one consumption from its charges' outcomes, in order. */
const decisionOf = (charges: ReadonlyArray<Charge>, outcomes: ReadonlyArray<ChargeRow>): Decision => {
  let failure: LimitReached | undefined
  const results = charges.map((charge, i): ChargeResult => {
    const outcome = outcomes[i]!
    if (outcome.failed) failure = limitReachedBy(charge, outcome.used)
    return { meter: charge.meter, charged: outcome.charged, used: outcome.used, limit: charge.limit, period: charge.period }
  })
  return failure ? Result.fail(failure) : Result.succeed(results)
}

/** One decision per consumption from the per-charge rows `vda_consume` returns. */
const decisionsOf = (items: ReadonlyArray<Consumption>, rows: ReadonlyArray<ChargeRow>): ReadonlyArray<Decision> => {
  const byCharge: Array<ChargeRow> = []
  for (const row of rows) byCharge[row.charge - 1] = row
  let offset = 0
  return items.map((item) => {
    const outcomes = byCharge.slice(offset, offset + item.charges.length)
    offset += item.charges.length
    return decisionOf(item.charges, outcomes)
  })
}

/**
 * Consumptions charged by a statement of another feature that calls `vda_consume` itself, with
 * these arguments in the place of its `consumeArguments`; their decisions come from the rows it
 * answers, read as `vda_consume`'s.
 */
export interface ChargedWithin {
  readonly arguments: Statement.Fragment
  readonly decisions: (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Decision>>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // decoded once per batch
  const consumed = SqlRows.findAll("vda_consume", ChargeRow)

  /** `consumeArguments` (src/metering/sql/vda_consume.ts) for `items`, in order. */
  const argumentsOf = (items: ReadonlyArray<Consumption>) => {
    const { charges, pricing } = flatten(items)
    return sql`
      ${charges.map((c) => c.index)}::integer[],
      ${charges.map((c) => c.item.accountId)}::text[],
      ${charges.map((c) => c.item.environment)}::text[],
      ${charges.map((c) => c.charge.meter)}::text[],
      ${charges.map((c) => c.charge.period.start)}::timestamptz[],
      ${charges.map((c) => c.charge.amount)}::integer[],
      ${charges.map((c) => c.charge.limit !== undefined)}::boolean[],
      ${nullableArray(charges.map((c) => c.charge.limit ?? null), PgTypes.OID.int4)}::integer[],
      ${nullableArray(charges.map((c) => c.charge.distinctValue ?? null), PgTypes.OID.text)}::text[],
      ${pricing.map((p) => p.index)}::integer[],
      ${pricing.map((p) => p.pricing.period.start)}::timestamptz[],
      ${pricing.map((p) => p.pricing.unitPriceCents)}::integer[],
      ${pricing.map((p) => p.pricing.included)}::integer[]`
  }

  const decided = (items: ReadonlyArray<Consumption>) => (rows: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    consumed(rows).pipe(
      Effect.map((decoded) => decisionsOf(items, decoded)),
      Effect.catchTag(["SqlError", "MalformedRow"], Effect.die)
    )

  const run = (items: ReadonlyArray<Consumption>, dryRun: boolean) =>
    decided(items)(sql`select charge, item_ok, failed, used, charged from vda_consume(${argumentsOf(items)}, ${dryRun})`)

  const chargedWithin = (items: ReadonlyArray<Consumption>): ChargedWithin => ({
    arguments: argumentsOf(items),
    decisions: (rows) => decided(items)(Effect.succeed(rows))
  })

  /**
   * Applies a batch (of any accounts) in one statement; one decision each. Inside a caller's
   * transaction, the caller counts the outcome (Outcomes) once it knows the charge committed.
   */
  const applyBatch = (items: ReadonlyArray<Consumption>) => run(items, false)

  // One lane per account, environment and first meter: an account's per-minute count and its
  // query allowances are batched separately and proceed side by side (they lock different
  // counters; exactness comes from the row locks, not from the lanes).
  const batcher = yield* Batcher.make({
    key: (item: Consumption) => `${item.accountId}/${item.environment}/${item.charges[0]?.meter ?? ""}`,
    // a statement of its own, committed as it returns: its outcomes are final
    process: (_key, items) =>
      Effect.tap(applyBatch(items), (decisions) =>
        Effect.sync(() => decisions.forEach((decision, i) => countCharge(items[i]!.environment, Result.isFailure(decision) ? decision.failure : undefined)))),
    maxBatchSize: 200
  })

  return {
    /**
     * Whether `consumption` would fit right now, from a plain read (no lock): lets callers
     * refuse before doing expensive work. The authoritative decision is still `consume`.
     */
    precheck: (consumption: Consumption) =>
      Effect.flatMap(run([consumption], true), ([decision]) =>
        decision && Result.isFailure(decision) ? Effect.fail(decision.failure) : Effect.void),
    /**
     * Charge every unit of `consumption` or none: fails with `LimitReached` (nothing charged)
     * when any limited meter would go past its limit.
     */
    consume: (consumption: Consumption): Effect.Effect<ReadonlyArray<ChargeResult>, LimitReached> =>
      batcher.submit(consumption),
    /** Applies consumptions a caller has already batched; one decision each. */
    applyBatch,
    chargedWithin
  }
})

export class Metering extends Context.Service<Metering, Effect.Success<typeof make>>()("vda/Metering", { make }) {
  static readonly layer = Layer.effect(Metering, make)
}
