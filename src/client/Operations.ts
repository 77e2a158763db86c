/**
 * Waiting for an operation: polled at the pace the API asks, until its status is final.
 */
import { Duration, Effect } from "effect"
import type { HttpClientResponse } from "effect/http"
import { type FinalStatus, isFinal } from "../../workflows/shared.js"
import type { Operation } from "../operations/Api.js"
import { retryAfterOf, VehicleDataApiError } from "./Errors.js"
import { RETRY_AFTER_FALLBACK } from "./Retry.js"

export interface WaitOptions {
  /** How long to wait for a final status, from the first poll (default 2 minutes). */
  readonly deadline?: Duration.Input
}

export const DEFAULT_DEADLINE: Duration.Input = "2 minutes"

/** An operation in one of its final statuses (completed, partial or failed). */
export type FinalOperation = Operation & { readonly status: FinalStatus }

type Poll = (id: string) => Effect.Effect<readonly [Operation, HttpClientResponse.HttpClientResponse], VehicleDataApiError>

/**
 * Polls with `poll` until the operation is final, sleeping between polls for the answer's
 * `Retry-After` (each poll's own 429s and 503s are tried again by `poll`). Interrupting it stops
 * the polling; at the deadline it fails with `deadline_exceeded`.
 */
export const waitForOperation = (poll: Poll) => (id: string, options?: WaitOptions): Effect.Effect<FinalOperation, VehicleDataApiError> => {
  const deadline = Duration.fromInputUnsafe(options?.deadline ?? DEFAULT_DEADLINE)
  const untilFinal: Effect.Effect<FinalOperation, VehicleDataApiError> = Effect.flatMap(poll(id), ([operation, response]) => {
    if (isFinal(operation.status)) return Effect.succeed(operation as FinalOperation)
    const seconds = retryAfterOf(response)
    return Effect.andThen(Effect.sleep(seconds === undefined ? RETRY_AFTER_FALLBACK : Duration.seconds(seconds)), untilFinalLater)
  })
  const untilFinalLater = Effect.suspend(() => untilFinal)
  return Effect.timeoutOrElse(untilFinal, {
    duration: deadline,
    orElse: () =>
      Effect.fail(
        new VehicleDataApiError({
          code: "deadline_exceeded",
          message: `Operation ${id} was not final within ${Duration.format(deadline)}`,
          retryable: true
        })
      )
  })
}
