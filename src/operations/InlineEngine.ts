/**
 * The inline workflow engine: runs the workflows' orchestration in this process, with the same
 * activities and the same retry policies as the Temporal worker (same formula, interpreted here).
 * Durable through PostgreSQL: on start it resumes every operation that is not final, and
 * activities are idempotent, so a restart loses nothing and charges nothing twice. For one
 * process only; more than one machine means Temporal.
 */
import { Cause, Effect, FiberMap, Layer, Option, Runtime } from "effect"
import {
  type Attempted,
  type ModulesActivities,
  runModulesOperation,
  runVehicleSearch,
  type VehicleSearchActivities
} from "../../workflows/orchestration.js"
import { BOOKKEEPING_RETRY, type RetryPolicy, retryDelayMs } from "../../workflows/shared.js"
import { AppConfig } from "../platform/Config.js"
import { OperationActivities } from "./Activities.js"
import { OperationsRepo } from "./Repo.js"
import { type StartRequest, startRequestOf, WorkflowEngine } from "./WorkflowEngine.js"

/** A failure an engine may retry unless it says otherwise (`retryable: false`). */
const isRetryable = (cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return false
  const failure = Cause.failureOption(cause)
  return !(Option.isSome(failure) && (failure.value as { retryable?: boolean }).retryable === false)
}

/** Retries per `policy` (Temporal's attempts and backoff), on a failed attempt that may be retried. */
export const withRetry = <A, E>(policy: RetryPolicy, effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  const attempt = (n: number): Effect.Effect<A, E> =>
    effect.pipe(
      Effect.catchAllCause((cause) =>
        isRetryable(cause) && (policy.maximumAttempts === 0 || n < policy.maximumAttempts)
          ? Effect.zipRight(Effect.sleep(retryDelayMs(policy, n)), attempt(n + 1))
          : Effect.failCause(cause)
      )
    )
  return attempt(1)
}

/** A source lookup after its retries, as the orchestration expects it. */
const attempted = <A, E extends { readonly message: string; readonly retryable: boolean }>(
  policy: RetryPolicy,
  effect: Effect.Effect<A, E>
): Effect.Effect<Attempted<A>> =>
  withRetry(policy, effect).pipe(
    Effect.map((value): Attempted<A> => ({ ok: true, value })),
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const failure = Cause.failureOption(cause)
      return Effect.succeed<Attempted<A>>(
        Option.isSome(failure)
          ? { ok: false, message: failure.value.message, retryable: failure.value.retryable }
          : { ok: false, message: "The source failed unexpectedly", retryable: true }
      )
    })
  )

export const InlineEngineLive = Layer.scoped(
  WorkflowEngine,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const activities = yield* OperationActivities
    const repo = yield* OperationsRepo
    const runtime = yield* Effect.runtime<never>()
    const workflows = yield* FiberMap.make<string>()
    // Aborted when the engine stops: running activities are interrupted and their operations,
    // not final, are resumed on the next start.
    const stopping = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => stopping.abort()))

    const run = <A>(effect: Effect.Effect<A>) => Runtime.runPromise(runtime)(effect, { signal: stopping.signal })
    const bookkeeping = <A, E>(effect: Effect.Effect<A, E>) => run(withRetry(BOOKKEEPING_RETRY, effect).pipe(Effect.orDie))

    const modulesActivities = (policy: RetryPolicy): ModulesActivities => ({
      markProcessing: (id) => bookkeeping(activities.markProcessing(id)),
      fetchModule: (input) => run(attempted(policy, activities.fetchModule(input))),
      recordModule: (input) => bookkeeping(activities.recordModule(input)),
      finalizeOperation: (input) => bookkeeping(activities.finalizeOperation(input))
    })

    const vehicleActivities = (policy: RetryPolicy): VehicleSearchActivities => ({
      markProcessing: (id) => bookkeeping(activities.markProcessing(id)),
      searchVehicle: (input) =>
        run(attempted(policy, activities.searchVehicle(input).pipe(
          Effect.mapError((e) => ({ message: `The vehicle source is unavailable (${e.reason})`, retryable: true }))
        ))),
      finalizeVehicleSearch: (input) => bookkeeping(activities.finalizeVehicleSearch(input))
    })

    const workflow = (request: StartRequest) =>
      Effect.tryPromise((): Promise<unknown> =>
        request.kind === "modules"
          ? runModulesOperation(modulesActivities(config.sourceRetry), {
            operationId: request.operationId,
            modules: request.modules,
            retry: config.sourceRetry
          })
          : runVehicleSearch(vehicleActivities(config.sourceRetry), { operationId: request.operationId, retry: config.sourceRetry })
      ).pipe(
        Effect.catchAll((error) =>
          stopping.signal.aborted
            ? Effect.void
            : Effect.logError(`operation ${request.operationId} stopped`, error)
        )
      )

    const start = (request: StartRequest) =>
      FiberMap.run(workflows, request.operationId, workflow(request), { onlyIfMissing: true }).pipe(
        Effect.zipRight(repo.markStarted(request.operationId, new Date())),
        Effect.catchAllCause((cause) => Effect.logError("could not start an operation", cause))
      )

    // resume what a previous run of this process left unfinished
    yield* Effect.forkScoped(
      Effect.flatMap(repo.unfinished(), (rows) =>
        Effect.zipRight(
          rows.length > 0 ? Effect.logInfo(`resuming ${rows.length} unfinished operation(s)`) : Effect.void,
          Effect.forEach(rows, (row) => start(startRequestOf(row)), { discard: true })
        ))
    )

    return WorkflowEngine.of({ start })
  })
)
