/**
 * What metering decided, counted for the people who run the service: charges accepted,
 * operations reused (nothing charged), quotas exceeded by meter, requests refused by the
 * per-minute limit. Counted where the decision is made, once per metered request.
 */
import { Effect, Metric } from "effect"
import { METER } from "../platform/contract/MeterNames.js"
import { labelSets, updateUnsafe } from "../platform/observability/Telemetry.js"
import type { Environment } from "../platform/http/RequestContext.js"

/** What an allowance's refusal tells the count: the meter it was on. */
interface Refusal {
  readonly meter: string
}

const outcomes = Metric.counter("vda_metering_outcomes", {
  description: "Metering decisions by outcome (accepted, reused, quota_exceeded, rate_limited) and meter",
  incremental: true
})
const labelsOf = labelSets("environment", "outcome", "meter")

const count = (environment: Environment, outcome: string, meter: string) =>
  updateUnsafe(outcomes, 1, labelsOf(environment, outcome, meter))

/** A consumption charged (`accepted`), or refused by an allowance (`quota_exceeded` on its meter). */
export const countCharge = (environment: Environment, refused: Refusal | undefined) =>
  refused === undefined ? count(environment, "accepted", "none") : count(environment, "quota_exceeded", refused.meter)

/**
 * The outcome of a charge made inside a transaction, counted once the transaction is over: a
 * refusal by an allowance whatever happened, a charge only if `charged` says the work committed.
 */
export const countCommitted = (environment: Environment) =>
<A, E, R>(transaction: Effect.Effect<A, E, R>, charged: (result: A) => boolean): Effect.Effect<A, E, R> =>
  transaction.pipe(
    Effect.tapError((error) =>
      Effect.sync(() => {
        if ((error as { readonly _tag?: unknown })?._tag === "LimitReached") {
          countCharge(environment, error as Refusal)
        }
      })),
    Effect.tap((result) => Effect.sync(() => charged(result) && count(environment, "accepted", "none")))
  )

/** A request refused by the per-minute limit. */
export const countRateLimited = (environment: Environment) => count(environment, "rate_limited", METER.requests)

/** An identical active operation reused: nothing charged. */
export const countReused = (environment: Environment) => count(environment, "reused", "none")
