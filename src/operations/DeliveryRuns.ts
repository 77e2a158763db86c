/**
 * The deliveries the engines run, as the engines see them: a delivery's state, the claims on it
 * (the inline engine's), the ones to take up (the reconciler's), and its attempts. The webhooks
 * own the deliveries and implement this (`webhooks/ForOperations.ts`).
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { DeliveryStatus } from "../../workflows/shared.js"
import type { RetryPolicy } from "../platform/sandboxSafe/RetryPolicy.js"
import type { Environment } from "../platform/http/RequestContext.js"

/** A delivery, as much of it as an engine needs: which one, whose, and where its attempts stand. */
export interface DeliveryState {
  readonly id: string
  readonly accountId: string
  readonly environment: Environment
  readonly status: "pending" | DeliveryStatus
  /** Its attempt series: 1 for the original, one more per resend. */
  readonly series: number
  /** Attempts of the current series. */
  readonly attempts: number
  readonly nextAttemptAt: Date
}

export interface AttemptInput {
  readonly deliveryId: string
  /** The series the attempt belongs to (absent: the first). */
  readonly series?: number | undefined
  readonly attempt: number
  readonly policy: RetryPolicy
}

/** The attempt failed; `retryable: false` when no further attempt should be made. */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{
  readonly message: string
  readonly retryable: boolean
}> {}

export class DeliveryRuns extends Context.Service<DeliveryRuns, {
  readonly find: (id: string) => Effect.Effect<Option.Option<DeliveryState>>
  /**
   * Attempt number `attempt` (1-based) of a delivery, with the engine's retry `policy`; fails with
   * DeliveryFailed unless the endpoint took it.
   */
  readonly attempt: (input: AttemptInput) => Effect.Effect<DeliveryStatus, DeliveryFailed>
  /**
   * Ends a delivery still pending in `series` `failed`; false when it was settled, or resent since.
   */
  readonly settle: (id: string, series: number | undefined, reason: string) => Effect.Effect<boolean>
  /** Handed to an engine at `at` (kept when it was already). */
  readonly markStarted: (id: string, at: Date) => Effect.Effect<void>
  /** Claims a pending delivery for `holder` (one process's inline engine); false if another holds it. */
  readonly claim: (id: string, holder: string, ttlMs: number) => Effect.Effect<boolean>
  /** Pending deliveries nobody holds a live claim on, by planned attempt time. */
  readonly claimable: (holder: string) => Effect.Effect<ReadonlyArray<DeliveryState>>
  readonly renewClaims: (holder: string, ttlMs: number) => Effect.Effect<void>
  readonly releaseClaims: (holder: string) => Effect.Effect<void>
  /** Pending deliveries never handed to an engine, created before `unstartedBefore`. */
  readonly unstarted: (unstartedBefore: Date) => Effect.Effect<ReadonlyArray<DeliveryState>>
  /** Started deliveries still pending whose next attempt was due before `dueBefore` (oldest first). */
  readonly overdue: (dueBefore: Date, limit: number) => Effect.Effect<ReadonlyArray<DeliveryState>>
}>()("vda/DeliveryRuns") {}
