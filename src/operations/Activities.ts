/**
 * The activities of every workflow, as Effect programs. Both engines run exactly these: the
 * inline engine on the server's runtime, the Temporal worker through `worker/Activities.ts`.
 * Each is idempotent (keyed by operation id and module), because an engine may run it again.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { failedModule, failedVehicleSearch, reportStatus } from "../../workflows/orchestration.js"
import { type FinalStatus, finalStatus, isFinal, type ModuleName, type ModuleOutcome, type VehicleSearchResult } from "../../workflows/shared.js"
import { ModuleSources } from "../modules/Sources.js"
import type { VehicleQueryParams } from "../vehicles/Api.js"
import { VehicleQuery } from "../vehicles/VehicleQuery.js"
import { type AttemptInput, DeliveryRuns } from "./DeliveryRuns.js"
import { OperationEvents } from "./OperationEvents.js"
import { type Finalized, type ModuleRow, OperationsRepo } from "./Repo.js"


const storedOutcome = (row: ModuleRow): ModuleOutcome =>
  row.status === "failed"
    ? { status: "failed", data: null, error: row.error!, warnings: row.warnings }
    : { status: row.status === "partial" ? "partial" : "completed", data: row.data, error: null, warnings: row.warnings }

/**
 * An activity's span (under the workflow's, on either engine) and its logs' operation id. With
 * tracing off the span is a no-op. No stack trace: it would always name this line, and capturing
 * it costs an Error per activity.
 */
const activity = (name: string, attributes: Record<string, string | number>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.withSpan(`activity.${name}`, { attributes }, { captureStackTrace: false }),
    Effect.annotateLogs(typeof attributes["vda.operation_id"] === "string" ? { operationId: attributes["vda.operation_id"] } : {})
  )

const ofOperation = (operationId: string, extra: Record<string, string> = {}) => ({ "vda.operation_id": operationId, ...extra })

/**
 * A module's outcome, as its operation's log tells it: "module fines completed", "module vtv
 * failed: module_unavailable". Only the error's code: no data, no message, no plate.
 */
const logModuleOutcome = (module: ModuleName, outcome: ModuleOutcome, accountId: string | undefined) =>
  Effect.logInfo(
    outcome.status === "failed"
      ? `module ${module} failed: ${outcome.error.code}`
      : `module ${module} ${outcome.status === "partial" ? "partially completed" : "completed"}`
  ).pipe(Effect.annotateLogs({
    module,
    moduleStatus: outcome.status,
    ...(accountId === undefined ? {} : { accountId }),
    ...(outcome.status === "failed" ? { errorCode: outcome.error.code, retryable: outcome.error.retryable } : {}),
    ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings.map((w) => w.code).join(",") } : {})
  }))

/**
 * An operation's end, as its log tells it: "operation completed in 1234 ms", with its status and
 * its duration from its creation (both on the app's clock). Logged only by the call that
 * finalised it: a repeated finalize changes nothing and logs nothing.
 */
const logFinalized = (finalized: Finalized, extra: Record<string, string | boolean> = {}) => {
  const durationMs = Math.max(0, finalized.at.getTime() - finalized.createdAt.getTime())
  const ended = finalized.status === "partial" ? "partially completed" : finalized.status
  return Effect.logInfo(`operation ${ended} in ${durationMs} ms`).pipe(
    Effect.annotateLogs({ kind: finalized.kind, accountId: finalized.accountId, status: finalized.status, durationMs, ...extra })
  )
}

/** Logs the operation's end when this call finalised it; true then. */
const loggedEnd = (extra?: Record<string, string | boolean>) => (finalized: Option.Option<Finalized>) =>
  Option.match(finalized, {
    onNone: () => Effect.succeed(false),
    onSome: (done) => Effect.as(logFinalized(done, extra), true)
  })

const make = Effect.gen(function*() {
  const repo = yield* OperationsRepo
  const sources = yield* ModuleSources
  const vehicles = yield* VehicleQuery
  const events = yield* OperationEvents
  const deliveries = yield* DeliveryRuns

  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  const operation = (id: string) =>
    Effect.flatMap(repo.find(id), Option.match({
      onNone: () => Effect.die(new Error(`unknown operation ${id}`)),
      onSome: Effect.succeed
    }))

  return {
    markProcessing: (operationId: string) =>
      Effect.flatMap(now, (at) => repo.markProcessing(operationId, at)).pipe(activity("markProcessing", ofOperation(operationId))),

    /** A module already recorded answers what was recorded: nothing is looked up twice. */
    fetchModule: Effect.fnUntraced(function*({ module, operationId }: { readonly operationId: string; readonly module: ModuleName }) {
      // the operation and its modules in one read
      const [found] = yield* repo.findManyWithModules([operationId])
      if (found === undefined) return yield* Effect.die(new Error(`unknown operation ${operationId}`))
      const op = found.row
      const recorded = found.modules.find((m) => m.module === module)
      if (recorded !== undefined && isFinal(recorded.status)) return storedOutcome(recorded)
      const requested = op.input.kind === "vehicle" ? [module] : op.input.modules
      return yield* sources[op.environment].fetch({ plate: op.plate, module, requested })
    }, (effect, { module, operationId }) => effect.pipe(activity("fetchModule", ofOperation(operationId, { "vda.module": module })))),

    recordModule: ({ module, operationId, outcome }: { readonly operationId: string; readonly module: ModuleName; readonly outcome: ModuleOutcome }) =>
      Effect.flatMap(now, (at) => repo.recordModule(operationId, module, outcome, at)).pipe(
        // logged by the call that recorded it: a repeated activity finds it recorded
        Effect.flatMap(({ accountId, recorded }) => recorded ? logModuleOutcome(module, outcome, accountId) : Effect.void),
        activity("recordModule", ofOperation(operationId, { "vda.module": module, "vda.module_status": outcome.status }))
      ),

    finalizeOperation: ({ operationId, status }: { readonly operationId: string; readonly status: FinalStatus }) =>
      Effect.flatMap(now, (at) => repo.finalize(operationId, status, at)).pipe(
        Effect.flatMap(loggedEnd()),
        Effect.asVoid,
        activity("finalizeOperation", ofOperation(operationId, { "vda.status": status }))
      ),

    searchVehicle: Effect.fnUntraced(function*({ operationId }: { readonly operationId: string }) {
      const op = yield* operation(operationId)
      // a report's vehicle is the basic query's, without options
      if (op.input.kind === "report") return yield* vehicles.search(op.environment, op.plate, {}, op.id)
      if (op.input.kind !== "vehicle") return yield* Effect.die(new Error(`${operationId} has no vehicle to search`))
      return yield* vehicles.search(op.environment, op.plate, op.input.params as VehicleQueryParams, op.input.requestId)
    }, (effect, { operationId }) => effect.pipe(activity("searchVehicle", ofOperation(operationId)))),

    finalizeVehicleSearch: ({ operationId, result }: { readonly operationId: string; readonly result: VehicleSearchResult }) =>
      Effect.flatMap(now, (at) => repo.finalize(operationId, result.ok ? "completed" : "failed", at, result)).pipe(
        Effect.flatMap(loggedEnd(result.ok ? {} : { errorCode: result.error.code })),
        Effect.asVoid,
        activity("finalizeVehicleSearch", ofOperation(operationId))
      ),

    finalizeReport: (input: { readonly operationId: string; readonly status: FinalStatus; readonly vehicle: VehicleSearchResult }) =>
      Effect.flatMap(now, (at) => repo.finalize(input.operationId, input.status, at, input.vehicle)).pipe(
        Effect.flatMap(loggedEnd()),
        Effect.asVoid,
        activity("finalizeReport", ofOperation(input.operationId, { "vda.status": input.status }))
      ),

    /** The final operation's webhook event, recorded once; the delivery to start, if any. */
    emitEvent: ({ operationId }: { readonly operationId: string }) =>
      events.finalized(operationId).pipe(activity("emitEvent", ofOperation(operationId))),

    /**
     * Attempt number `attempt` of a delivery's series (absent: the first); fails with
     * DeliveryFailed unless the endpoint took it.
     */
    attemptDelivery: (input: AttemptInput) =>
      deliveries.attempt(input).pipe(activity("attemptDelivery", { "vda.delivery_id": input.deliveryId, "vda.attempt": input.attempt })),

    /** A delivery whose last attempt failed inside the activity: settled `failed` (no-op once settled or resent). */
    settleDelivery: ({ deliveryId, series }: { readonly deliveryId: string; readonly series?: number | undefined }) =>
      deliveries.settle(deliveryId, series, "the delivery's attempts ran out").pipe(
        Effect.asVoid,
        activity("settleDelivery", { "vda.delivery_id": deliveryId })
      ),

    /**
     * An operation whose workflow is gone (terminated, timed out, reset): every module not
     * answered yet fails as its source being unavailable (retryable), and the operation takes
     * the status the spec's rules give. True when this finalised it.
     */
    finalizeLost: Effect.fnUntraced(function*(operationId: string) {
      const op = yield* operation(operationId)
      if (isFinal(op.status)) return false
      const at = yield* now
      // the end says why: the workflow was lost, not the sources' answers
      const ended = loggedEnd({ lost: true })
      if (op.input.kind === "vehicle") {
        return yield* Effect.flatMap(repo.finalize(operationId, "failed", at, failedVehicleSearch({ retryable: true })), ended)
      }
      const lostVehicle = failedVehicleSearch({ retryable: true })
      const outcomes: Array<ModuleOutcome> = []
      for (const row of yield* repo.modules(operationId)) {
        if (isFinal(row.status)) {
          outcomes.push(storedOutcome(row))
          continue
        }
        const outcome = failedModule(row.module, { retryable: true })
        const { recorded } = yield* repo.recordModule(operationId, row.module, outcome, at)
        if (recorded) yield* logModuleOutcome(row.module, outcome, op.accountId)
        outcomes.push(outcome)
      }
      return op.input.kind === "report"
        ? yield* Effect.flatMap(repo.finalize(operationId, reportStatus(op.result ?? lostVehicle, outcomes), at, op.result ?? lostVehicle), ended)
        : yield* Effect.flatMap(repo.finalize(operationId, finalStatus(outcomes), at), ended)
    }, (effect, operationId) => effect.pipe(Effect.annotateLogs({ operationId })))
  }
})

export class OperationActivities extends Context.Service<OperationActivities, Effect.Success<typeof make>>()(
  "vda/OperationActivities",
  { make }
) {
  /** Needs the `OperationEvents` and the `DeliveryRuns` (the webhooks'). */
  static readonly layer = Layer.effect(OperationActivities, make).pipe(Layer.provide(OperationsRepo.layer))
}
