/**
 * The inline workflow engine: runs the workflows' orchestration in this process, with the same
 * activities and the same retry policies as the Temporal worker (same formula, interpreted here).
 * Durable through PostgreSQL: on start it resumes every operation that is not final, and
 * activities are idempotent, so a restart loses nothing and charges nothing twice. Each process
 * claims what it runs (renewed while it lives), so API processes sharing one database never run
 * the same operation or send the same delivery twice, and take over a dead process's work as soon
 * as its presence session is gone (or its claims lapse). More than one machine is better served
 * by Temporal.
 */
import { randomUUID } from "node:crypto"
import { Cause, Clock, Duration, Effect, FiberMap, FiberSet, Layer, Option, Result, Schedule, type Tracer } from "effect"
import {
  type Attempted,
  type EventActivities,
  runDelivery,
  type ModulesActivities,
  type ReportActivities,
  runModulesOperation,
  runReport,
  runVehicleSearch,
  type VehicleSearchActivities
} from "../../workflows/orchestration.js"
import { type DeliveryStatus, FIRST_SERIES } from "../../workflows/shared.js"
import { BOOKKEEPING_RETRY, type RetryPolicy } from "../platform/sandboxSafe/RetryPolicy.js"
import { AppConfig } from "../platform/config/Config.js"
import { scheduleOf } from "../platform/upstream/RetrySchedule.js"
import { presence } from "../platform/db/Presence.js"
import { OperationActivities } from "./Activities.js"
import { DeliveryRuns } from "./DeliveryRuns.js"
import { countFinding } from "./Metrics.js"
import { OperationsRepo } from "./Repo.js"
import {
  type DeliveryStartRequest,
  deliveryStartRequestOf,
  type EngineReadiness,
  type StartRequest,
  startRequestOf,
  WorkflowEngine
} from "./WorkflowEngine.js"

/** A failure an engine may retry unless it says otherwise (`retryable: false`). */
const isRetryable = (cause: Cause.Cause<unknown>) => {
  if (Cause.hasInterruptsOnly(cause)) return false
  const failure = Cause.findErrorOption(cause)
  return !(Option.isSome(failure) && (failure.value as { retryable?: boolean }).retryable === false)
}

/** Retries per `policy` (Temporal's attempts and backoff), on a failed attempt that may be retried. */
export const withRetry = <A, E>(policy: RetryPolicy, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  effect.pipe(
    // a defect is retried too (a database gone for a moment), an interruption never
    Effect.sandbox,
    Effect.retry({ schedule: scheduleOf(policy), while: isRetryable }),
    Effect.catch((cause) => Effect.failCause(cause))
  )

/** A source lookup after its retries, as the orchestration expects it. */
const attempted = <A, E extends { readonly retryable: boolean }>(
  policy: RetryPolicy,
  effect: Effect.Effect<A, E>
): Effect.Effect<Attempted<A>> =>
  withRetry(policy, effect).pipe(
    Effect.map((value): Attempted<A> => ({ ok: true, value })),
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const failure = Cause.findErrorOption(cause)
      return Effect.succeed<Attempted<A>>({ ok: false, retryable: Option.isSome(failure) ? failure.value.retryable : true })
    })
  )

/** What the inline engine needs of a delivery to run: which one, and which attempt series of it. */
type DeliveryRun = Pick<DeliveryStartRequest, "deliveryId" | "series">

export const InlineEngineLive = Layer.effect(
  WorkflowEngine,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const activities = yield* OperationActivities
    const repo = yield* OperationsRepo
    const deliveries = yield* DeliveryRuns
    const workflows = yield* FiberMap.make<string>()
    // this process, as the holder of the operations and deliveries it runs
    const holder = randomUUID()
    const claimTtlMs = config.inlineClaimTtlMs
    // while it is open, this process's claims hold; when it dies, they lapse at once
    yield* presence(holder).pipe(Effect.orDie)
    // When the engine stops, running activities are interrupted (their set closes) and their
    // operations, not final, are resumed on the next start. A set rather than an abort signal per
    // activity: adding and removing a signal's listener cost more than the rest of the run.
    const stopping = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => stopping.abort()))
    const runPromise = yield* FiberSet.runtimePromise(yield* FiberSet.make<unknown, unknown>())<never>()

    /**
     * How a workflow runs its activities: on the engine's services, under the workflow's span (so
     * a trace goes from the request to each activity), and its bookkeeping retried.
     */
    const within = (workflow: Tracer.Span) => {
      const run = <A>(effect: Effect.Effect<A>) => runPromise(Effect.withParentSpan(effect, workflow, { captureStackTrace: false }))
      const bookkeeping = <A, E>(effect: Effect.Effect<A, E>) => run(withRetry(BOOKKEEPING_RETRY, effect).pipe(Effect.orDie))
      return { run, bookkeeping }
    }

    /** A workflow's span: a child of whatever started it (the request, or the operation's workflow). */
    const workflowSpan = <A, E>(name: string, attributes: Record<string, string>, body: (span: Tracer.Span) => Effect.Effect<A, E>) =>
      Effect.useSpan(`workflow.${name}`, { attributes }, body)

    /**
     * A delivery's attempts under the delivery policy. The attempt count and the planned time of
     * the next attempt live in the delivery's row, so a restarted process carries on where the
     * last one stopped: with the next attempt number, at its planned time.
     */
    const deliveryAttempts = ({ deliveryId, series }: DeliveryRun): Effect.Effect<Attempted<DeliveryStatus>> => {
      const policy = config.webhookRetry
      const next: Effect.Effect<Option.Option<Attempted<DeliveryStatus>>> = Effect.gen(function*() {
        const row = Option.getOrUndefined(yield* deliveries.find(deliveryId))
        if (row === undefined) return Option.some({ ok: true, value: "failed" })
        if (row.status !== "pending") return Option.some({ ok: true, value: row.status })
        const wait = row.nextAttemptAt.getTime() - (yield* Clock.currentTimeMillis)
        if (wait > 0) yield* Effect.sleep(wait)
        const result = yield* Effect.result(activities.attemptDelivery({ deliveryId, series, attempt: row.attempts + 1, policy }))
        if (Result.isSuccess(result)) return Option.some({ ok: true, value: result.success })
        return result.failure.retryable
          ? Option.none() // recorded as pending with its planned time: read it and go again
          : Option.some({ ok: false, retryable: false })
      })
      // a database hiccup is retried like any bookkeeping; a failed attempt loops to the next one
      const loop: Effect.Effect<Attempted<DeliveryStatus>> = Effect.flatMap(
        withRetry(BOOKKEEPING_RETRY, next),
        Option.match({ onNone: () => loop, onSome: Effect.succeed })
      )
      return loop
    }

    const delivery = (request: DeliveryRun) =>
      workflowSpan("webhook-delivery", { "vda.delivery_id": request.deliveryId }, (span) => {
        const { bookkeeping, run } = within(span)
        return Effect.tryPromise(() =>
          runDelivery(
            {
              attemptDelivery: () => run(deliveryAttempts(request)),
              settleDelivery: (input) => bookkeeping(activities.settleDelivery(input))
            },
            { deliveryId: request.deliveryId, series: request.series, retry: config.webhookRetry }
          )
        )
      }).pipe(
        Effect.annotateLogs("deliveryId", request.deliveryId),
        Effect.catch((error) =>
          stopping.signal.aborted ? Effect.void : Effect.logError(`delivery ${request.deliveryId} stopped`, error)
        )
      )

    /**
     * One run per attempt series: a resent delivery starts at once, even while the run of its
     * previous series is still finishing (that run leaves the new series alone).
     */
    const deliveryKey = (request: DeliveryRun) => `delivery/${request.deliveryId}/${request.series}`

    const startDelivery = (request: DeliveryRun) =>
      Effect.flatMap(deliveries.claim(request.deliveryId, holder, claimTtlMs), (claimed) =>
        claimed
          ? FiberMap.run(workflows, deliveryKey(request), delivery(request), { onlyIfMissing: true }).pipe(
            Effect.andThen(Effect.flatMap(Clock.currentTimeMillis, (now) => deliveries.markStarted(request.deliveryId, new Date(now))))
          )
          : Effect.logDebug(`delivery ${request.deliveryId} runs in another process`)).pipe(
          Effect.catchCause((cause) => Effect.logError("could not start a delivery", cause))
        )

    type Within = ReturnType<typeof within>

    const events = ({ bookkeeping, run }: Within): EventActivities => ({
      emitEvent: (input) => bookkeeping(activities.emitEvent(input)),
      // a newly recorded event: its delivery's first series
      startDelivery: (deliveryId) => run(startDelivery({ deliveryId, series: FIRST_SERIES }))
    })

    const modulesActivities = (policy: RetryPolicy, { bookkeeping, run }: Within): ModulesActivities => ({
      markProcessing: (id) => bookkeeping(activities.markProcessing(id)),
      fetchModule: (input) => run(attempted(policy, activities.fetchModule(input))),
      recordModule: (input) => bookkeeping(activities.recordModule(input)),
      finalizeOperation: (input) => bookkeeping(activities.finalizeOperation(input)),
      ...events({ bookkeeping, run })
    })

    const vehicleActivities = (policy: RetryPolicy, { bookkeeping, run }: Within): VehicleSearchActivities => ({
      ...events({ bookkeeping, run }),
      markProcessing: (id) => bookkeeping(activities.markProcessing(id)),
      searchVehicle: (input) =>
        run(attempted(policy, activities.searchVehicle(input).pipe(Effect.mapError(() => ({ retryable: true }))))),
      finalizeVehicleSearch: (input) => bookkeeping(activities.finalizeVehicleSearch(input))
    })

    const reportActivities = (policy: RetryPolicy, bound: Within): ReportActivities => ({
      ...modulesActivities(policy, bound),
      searchVehicle: vehicleActivities(policy, bound).searchVehicle,
      finalizeReport: (input) => bound.bookkeeping(activities.finalizeReport(input))
    })

    const orchestrate = (request: StartRequest, bound: Within): Promise<unknown> => {
      const settings = { operationId: request.operationId, retry: config.sourceRetry, deliveryRetry: config.webhookRetry }
      switch (request.kind) {
        case "modules":
          return runModulesOperation(modulesActivities(config.sourceRetry, bound), { ...settings, modules: request.modules })
        case "report":
          return runReport(reportActivities(config.sourceRetry, bound), { ...settings, modules: request.modules })
        case "vehicle":
          return runVehicleSearch(vehicleActivities(config.sourceRetry, bound), settings)
      }
    }

    const workflow = (request: StartRequest) =>
      workflowSpan(request.kind, { "vda.operation_id": request.operationId }, (span) =>
        Effect.tryPromise(() => orchestrate(request, within(span)))).pipe(
        Effect.annotateLogs("operationId", request.operationId),
        Effect.catch((error) =>
          stopping.signal.aborted
            ? Effect.void
            : Effect.logError(`operation ${request.operationId} stopped`, error)
        )
      )

    const start = (request: StartRequest) =>
      Effect.flatMap(Effect.flatMap(Clock.currentTimeMillis, (now) => repo.claim(request.operationId, holder, claimTtlMs, new Date(now))), (claimed) =>
        claimed
          ? FiberMap.run(workflows, request.operationId, workflow(request), { onlyIfMissing: true })
          : Effect.logDebug(`operation ${request.operationId} runs in another process`)).pipe(
          Effect.catchCause((cause) => Effect.logError("could not start an operation", cause)),
          Effect.withSpan("workflow.start", { attributes: { "vda.operation_id": request.operationId, "vda.kind": request.kind } }, { captureStackTrace: false })
        )

    /**
     * Takes up what no live process holds: at start, what a previous run left unfinished; later,
     * what a process that died left behind (its claims lapsed). Operations, then deliveries (each
     * waits for its planned attempt time). Also keeps this process's claims alive.
     */
    // when this process last renewed its claims: an engine that cannot is not ready
    let renewedAt = yield* Clock.currentTimeMillis
    const sweepEveryMs = Math.max(100, Math.floor(claimTtlMs / 3))

    const sweep = Effect.fnUntraced(function*(first: boolean) {
      yield* repo.renewClaims(holder, claimTtlMs)
      yield* deliveries.renewClaims(holder, claimTtlMs)
      renewedAt = yield* Clock.currentTimeMillis
      const rows = (yield* repo.claimable(holder)).filter((row) => first || !runningHere(row.id))
      if (rows.length > 0) yield* Effect.logInfo(`resuming ${rows.length} unfinished operation(s)`)
      countFinding("resumed", rows.length)
      yield* Effect.forEach(rows, (row) => start(startRequestOf(row)), { discard: true })
      const pending = (yield* deliveries.claimable(holder)).map(deliveryStartRequestOf)
        .filter((request) => first || !runningHere(deliveryKey(request)))
      if (pending.length > 0) {
        yield* Effect.logInfo(`resuming ${pending.length} pending webhook ${pending.length === 1 ? "delivery" : "deliveries"}`)
      }
      yield* Effect.forEach(pending, startDelivery, { discard: true })
    }, Effect.catchCause((cause) => Effect.logWarning("could not take up unfinished work; trying again shortly", cause)))

    const runningHere = (key: string) => FiberMap.hasUnsafe(workflows, key)

    // claims lapse when this process stops renewing them; at shutdown they are handed over at once
    yield* Effect.addFinalizer(() =>
      Effect.all([repo.releaseClaims(holder), deliveries.releaseClaims(holder)], { discard: true }).pipe(Effect.ignore)
    )
    yield* Effect.forkScoped(Effect.andThen(
      sweep(true),
      sweep(false).pipe(Effect.repeat(Schedule.spaced(Duration.millis(sweepEveryMs))))
    ))

    const readiness = Effect.map(Clock.currentTimeMillis, (now): EngineReadiness =>
      now - renewedAt <= claimTtlMs
        ? { engine: "inline", up: true }
        : { engine: "inline", up: false, detail: "the engine cannot renew its claims on its operations" })

    return WorkflowEngine.of({ start, startDelivery, readiness })
  })
)
