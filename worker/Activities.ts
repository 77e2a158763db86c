/**
 * The activities as the Temporal worker registers them: each runs the Effect program of
 * `src/operations/Activities.ts` on a ManagedRuntime, with the activity's cancellation signal,
 * heartbeating while it runs (a worker that dies is noticed within the heartbeat timeout), and
 * turns a typed failure into an ApplicationFailure whose type is the failure's tag and whose
 * `nonRetryable` is explicit (never left to Temporal's default). A defect is logged here, in
 * full, and leaves the activity with a fixed message: nothing internal travels further.
 *
 * With tracing, the program's spans are children of the activity's span (worker/Tracing.ts), and
 * its log lines carry the operation or delivery it works on.
 */
import { OtelTracer } from "@effect/opentelemetry"
import * as Otel from "@opentelemetry/api"
import { ApplicationFailure, Context as ActivityContext } from "@temporalio/activity"
import { Cause, Effect, Exit, type ManagedRuntime, Option } from "effect"
import type { WorkflowActivities } from "../workflows/shared.js"
import { ACTIVITY_TIMEOUTS } from "../src/platform/sandboxSafe/ActivityTimeouts.js"
import { OperationActivities } from "../src/operations/Activities.js"

/** A typed failure of an activity: tagged, and retryable unless it says otherwise. */
interface TaggedFailure {
  readonly _tag: string
  readonly message?: string
  readonly reason?: string
  readonly retryable?: boolean
}

export const DEFECT_MESSAGE = "The activity failed unexpectedly (details in the worker's log)"

export const toActivityResult = <A>(exit: Exit.Exit<A, TaggedFailure>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    throw ApplicationFailure.create({
      type: error._tag,
      message: error.message || error.reason || error._tag,
      nonRetryable: error.retryable === false
    })
  }
  if (Cause.hasInterruptsOnly(exit.cause)) {
    // interrupted because Temporal cancelled the activity: surface its cancellation
    throw ActivityContext.current().cancellationSignal.reason ?? ApplicationFailure.retryable("interrupted", "Interrupted")
  }
  throw ApplicationFailure.create({ type: "Defect", message: DEFECT_MESSAGE, nonRetryable: false })
}

/** Building its services may fail too (configuration, database): those failures are tagged as well. */
type Runtime = ManagedRuntime.ManagedRuntime<OperationActivities, TaggedFailure>

/**
 * The activity's span, when the tracing interceptor made one, as the program's Effect parent: its
 * spans nest under it, and its log lines carry its trace even outside the program's own spans.
 */
const inActivitySpan = <A, E, R>(program: Effect.Effect<A, E, R>) => {
  const span = Otel.trace.getActiveSpan()
  return span === undefined ? program : OtelTracer.withSpanContext(program, span.spanContext())
}

/** What the activity's log lines carry: the operation or delivery its input names. */
const logAnnotationsOf = (input: unknown): Record<string, string> => {
  // markProcessing's input is the operation id itself
  if (typeof input === "string") return { operationId: input }
  const annotations: Record<string, string> = {}
  for (const key of ["operationId", "deliveryId"] as const) {
    const value = (input as Partial<Record<typeof key, unknown>> | undefined)?.[key]
    if (typeof value === "string") annotations[key] = value
  }
  return annotations
}

/** Heartbeats often enough for the heartbeat timeout (the SDK throttles them further). */
const HEARTBEAT_EVERY_MS = Math.floor(ACTIVITY_TIMEOUTS.heartbeatMs / 3)

const activity = <I extends Array<unknown>, A>(
  runtime: Runtime,
  program: (activities: OperationActivities["Service"], ...input: I) => Effect.Effect<A, TaggedFailure>
) =>
async (...input: I): Promise<A> => {
  const context = ActivityContext.current()
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS)
  try {
    const exit = await runtime.runPromiseExit(
      Effect.flatMap(OperationActivities, (a) => program(a, ...input)).pipe(
        Effect.tapDefect((defect) => Effect.logError(`activity ${context.info.activityType} failed unexpectedly`, defect)),
        Effect.annotateLogs(logAnnotationsOf(input[0])),
        inActivitySpan
      ),
      { signal: context.cancellationSignal }
    )
    return toActivityResult(exit)
  } finally {
    clearInterval(heartbeat)
  }
}

export const createActivities = (runtime: Runtime): WorkflowActivities => ({
  markProcessing: activity(runtime, (a, id: string) => a.markProcessing(id)),
  fetchModule: activity(runtime, (a, input: Parameters<WorkflowActivities["fetchModule"]>[0]) => a.fetchModule(input)),
  recordModule: activity(runtime, (a, input: Parameters<WorkflowActivities["recordModule"]>[0]) => a.recordModule(input)),
  finalizeOperation: activity(runtime, (a, input: Parameters<WorkflowActivities["finalizeOperation"]>[0]) => a.finalizeOperation(input)),
  searchVehicle: activity(runtime, (a, input: Parameters<WorkflowActivities["searchVehicle"]>[0]) => a.searchVehicle(input)),
  finalizeVehicleSearch: activity(runtime, (a, input: Parameters<WorkflowActivities["finalizeVehicleSearch"]>[0]) =>
    a.finalizeVehicleSearch(input)),
  finalizeReport: activity(runtime, (a, input: Parameters<WorkflowActivities["finalizeReport"]>[0]) => a.finalizeReport(input)),
  emitEvent: activity(runtime, (a, input: Parameters<WorkflowActivities["emitEvent"]>[0]) => a.emitEvent(input)),
  // the attempt number is Temporal's: the count the delivery policy's five attempts are made of
  attemptDelivery: activity(runtime, (a, input: Parameters<WorkflowActivities["attemptDelivery"]>[0]) =>
    a.attemptDelivery({ ...input, attempt: ActivityContext.current().info.attempt })),
  settleDelivery: activity(runtime, (a, input: Parameters<WorkflowActivities["settleDelivery"]>[0]) => a.settleDelivery(input))
})
