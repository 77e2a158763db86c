/**
 * The Temporal engine, API side: starts each operation's workflow on the task queue the worker
 * (`npm run worker`) serves. Workflow ids carry the reuse key and the operation id, readable in
 * the Temporal UI. Starting is idempotent (an id already started is fine); an operation committed
 * but not started (a crash in between, Temporal unreachable) is started by a reconciler that
 * looks for such operations every 15 seconds.
 */
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from "@temporalio/client"
import { Clock, Effect, Layer, Schedule } from "effect"
import { type RetryPolicy, workflowIds } from "../../workflows/shared.js"
import { AppConfig } from "../platform/Config.js"
import { OperationsRepo } from "./Repo.js"
import { type StartRequest, startRequestOf, WorkflowEngine } from "./WorkflowEngine.js"

/** The part of the Temporal client the engine uses (a fake in tests). */
export interface WorkflowStarter {
  readonly start: (
    workflowType: string,
    options: { readonly taskQueue: string; readonly workflowId: string; readonly args: ReadonlyArray<unknown> }
  ) => Promise<unknown>
}

export const workflowStart = (request: StartRequest, taskQueue: string, retry: RetryPolicy) =>
  request.kind === "modules"
    ? {
      workflowType: "modulesOperation",
      options: {
        taskQueue,
        workflowId: workflowIds.modules(request),
        args: [{ operationId: request.operationId, modules: request.modules, retry }]
      }
    }
    : {
      workflowType: "vehicleSearch",
      options: { taskQueue, workflowId: workflowIds.vehicle(request), args: [{ operationId: request.operationId, retry }] }
    }

const RECONCILE_EVERY = "15 seconds"
const UNSTARTED_GRACE_MS = 10_000

export const makeTemporalEngine = (starter: WorkflowStarter) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* OperationsRepo

    const start = (request: StartRequest) => {
      const { options, workflowType } = workflowStart(request, config.temporal.taskQueue, config.sourceRetry)
      return Effect.tryPromise({
        try: () => starter.start(workflowType, options),
        catch: (error) => error
      }).pipe(
        Effect.catchIf((error) => error instanceof WorkflowExecutionAlreadyStartedError, () => Effect.void),
        Effect.zipRight(Effect.flatMap(Clock.currentTimeMillis, (now) => repo.markStarted(request.operationId, new Date(now)))),
        Effect.catchAll((error) => Effect.logWarning(`operation ${request.operationId} not started yet (will retry)`, error))
      )
    }

    const reconcile = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* repo.unfinished({ unstartedBefore: new Date(now - UNSTARTED_GRACE_MS) })
      yield* Effect.forEach(rows, (row) => start(startRequestOf(row)), { discard: true })
    })

    return { start, reconcile }
  })

export const TemporalEngineLive = Layer.scoped(
  WorkflowEngine,
  Effect.gen(function*() {
    const config = yield* AppConfig
    // connects on first use, so the API starts even while Temporal is down
    const connection = Connection.lazy({ address: config.temporal.address })
    yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()).pipe(Effect.ignore))
    const client = new Client({ connection, namespace: config.temporal.namespace })
    const engine = yield* makeTemporalEngine({
      start: (workflowType, options) => client.workflow.start(workflowType, { ...options, args: [...options.args] })
    })
    yield* Effect.forkScoped(engine.reconcile.pipe(Effect.ignoreLogged, Effect.repeat(Schedule.spaced(RECONCILE_EVERY))))
    return WorkflowEngine.of({ start: engine.start })
  })
)
