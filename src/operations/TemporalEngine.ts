/**
 * The Temporal engine, API side: starts each operation's workflow on the task queue the worker
 * (`npm run worker`) serves. Workflow ids carry the reuse key and the operation id, readable in
 * the Temporal UI. Starting is idempotent (an id already started is fine); an operation committed
 * but not started (a crash in between, Temporal unreachable) is started by a reconciler that
 * looks for such operations every 15 seconds. Webhook deliveries are started the same way: by the
 * operation's workflow (a child that outlives it), by the test endpoint through this engine, and
 * by the reconciler when neither got to it.
 */
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from "@temporalio/client"
import { Clock, Effect, Layer, Schedule } from "effect"
import { type RetryPolicy, workflowIds } from "../../workflows/shared.js"
import { AppConfig } from "../platform/Config.js"
import { WebhooksRepo } from "../webhooks/Repo.js"
import { OperationsRepo } from "./Repo.js"
import { type StartRequest, startRequestOf, WorkflowEngine } from "./WorkflowEngine.js"

/** The part of the Temporal client the engine uses (a fake in tests). */
export interface WorkflowStarter {
  readonly start: (
    workflowType: string,
    options: {
      readonly taskQueue: string
      readonly workflowId: string
      readonly args: ReadonlyArray<unknown>
      /** Set for deliveries: an id is never run twice, even after its workflow closed. */
      readonly workflowIdReusePolicy?: "REJECT_DUPLICATE"
    }
  ) => Promise<unknown>
}

interface Policies {
  readonly retry: RetryPolicy
  readonly deliveryRetry: RetryPolicy
}

export const workflowStart = (request: StartRequest, taskQueue: string, { deliveryRetry, retry }: Policies) =>
  request.kind === "modules"
    ? {
      workflowType: "modulesOperation",
      options: {
        taskQueue,
        workflowId: workflowIds.modules(request),
        args: [{ operationId: request.operationId, modules: request.modules, retry, deliveryRetry }]
      }
    }
    : {
      workflowType: "vehicleSearch",
      options: {
        taskQueue,
        workflowId: workflowIds.vehicle(request),
        args: [{ operationId: request.operationId, retry, deliveryRetry }]
      }
    }

export const deliveryStart = (deliveryId: string, taskQueue: string, retry: RetryPolicy) => ({
  workflowType: "webhookDelivery",
  options: {
    taskQueue,
    workflowId: workflowIds.delivery(deliveryId),
    args: [{ deliveryId, retry }],
    workflowIdReusePolicy: "REJECT_DUPLICATE" as const
  }
})

const RECONCILE_EVERY = "15 seconds"
const UNSTARTED_GRACE_MS = 10_000

export const makeTemporalEngine = (starter: WorkflowStarter) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* OperationsRepo
    const webhooks = yield* WebhooksRepo
    const policies = { retry: config.sourceRetry, deliveryRetry: config.webhookRetry }

    /** Starts (an id already started counts as started), then marks it started. */
    const startWorkflow = (
      what: string,
      { options, workflowType }: { workflowType: string; options: Parameters<WorkflowStarter["start"]>[1] },
      markStarted: (at: Date) => Effect.Effect<void>
    ) =>
      Effect.tryPromise({
        try: () => starter.start(workflowType, options),
        catch: (error) => error
      }).pipe(
        Effect.catchIf((error) => error instanceof WorkflowExecutionAlreadyStartedError, () => Effect.void),
        Effect.zipRight(Effect.flatMap(Clock.currentTimeMillis, (now) => markStarted(new Date(now)))),
        Effect.catchAll((error) => Effect.logWarning(`${what} not started yet (will retry)`, error))
      )

    const start = (request: StartRequest) =>
      startWorkflow(
        `operation ${request.operationId}`,
        workflowStart(request, config.temporal.taskQueue, policies),
        (at) => repo.markStarted(request.operationId, at)
      )

    const startDelivery = (deliveryId: string) =>
      startWorkflow(
        `delivery ${deliveryId}`,
        deliveryStart(deliveryId, config.temporal.taskQueue, config.webhookRetry),
        (at) => webhooks.markStarted(deliveryId, at)
      )

    const reconcile = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const unstartedBefore = new Date(now - UNSTARTED_GRACE_MS)
      const rows = yield* repo.unfinished({ unstartedBefore })
      yield* Effect.forEach(rows, (row) => start(startRequestOf(row)), { discard: true })
      const deliveries = yield* webhooks.pending({ unstartedBefore })
      yield* Effect.forEach(deliveries, (row) => startDelivery(row.id), { discard: true })
    })

    return { start, startDelivery, reconcile }
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
    return WorkflowEngine.of({ start: engine.start, startDelivery: engine.startDelivery })
  })
)
