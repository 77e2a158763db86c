/**
 * The Temporal engine, API side: starts each operation's workflow on the operations task queue
 * and each webhook delivery's (one per attempt series: a resend starts the next) on the
 * deliveries queue, which the worker (`npm run worker`) serves.
 *
 * PostgreSQL is the outbox. A request waits on a start at most TEMPORAL_START_TIMEOUT_MS (2 s):
 * the operation is already committed, so if Temporal is slow or down the client still gets its
 * answer and the reconciler starts the workflow. The reconciler (one process at a time, under a
 * lease) also finds operations and deliveries whose workflow is gone: a workflow the server no
 * longer knows (namespace wiped, never arrived) is started again under the same id; one that
 * closed without settling its operation (terminated, timed out) has its operation finalised with
 * `module_unavailable` (retryable), and its event sent.
 *
 * Workflow ids, search attributes, memo and summary carry the plate only as its salted hash.
 */
import type * as Workflows from "../../workflows/index.js"
import { AsyncLocalStorage } from "node:async_hooks"
import * as Otel from "@opentelemetry/api"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import {
  Client,
  Connection,
  type ConnectionLike,
  type WorkflowClientInterceptor,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError
} from "@temporalio/client"
import { type DataConverter, defaultPayloadConverter, type Headers, type SearchAttributePair } from "@temporalio/common"
import { TRACE_HEADER, WORKFLOW_ID_ATTR_KEY } from "@temporalio/interceptors-opentelemetry/lib/instrumentation.js"
import { SPAN_DELIMITER, SpanName } from "@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js"
import { Clock, Context, Duration, Effect, Layer, Option, Schedule, type Tracer } from "effect"
import { searchAttributesOf, workflowMetadataOf } from "../../workflows/searchAttributes.js"
import { modulesKey, type WorkflowLabels, workflowIds } from "../../workflows/shared.js"
import { AppConfig } from "../platform/config/Config.js"
import { Leases } from "../platform/db/Leases.js"
import { plateHash } from "../platform/ids/PlateHash.js"
import { RequestTracer } from "../platform/observability/Telemetry.js"
import { describeCause, StartupError } from "../platform/process/Startup.js"
import type { RetryPolicy } from "../platform/sandboxSafe/RetryPolicy.js"
import { connectionOptionsOf, dataConverterOf } from "../platform/temporal/Temporal.js"
import { TemporalSecrets, temporalSecretsLayer } from "../platform/temporal/TemporalSecrets.js"
import { countFinding } from "./Metrics.js"
import { OperationActivities } from "./Activities.js"
import { DeliveryRuns } from "./DeliveryRuns.js"
import { OperationEvents } from "./OperationEvents.js"
import { OperationsRepo } from "./Repo.js"
import { registerSearchAttributes } from "./SearchAttributes.js"
import {
  type DeliveryStartRequest,
  deliveryStartRequestOf,
  type EngineReadiness,
  type StartRequest,
  startRequestOf,
  WorkflowEngine
} from "./WorkflowEngine.js"

/** The workflows the worker runs, by name (workflows/index.ts). */
type WorkflowName = keyof typeof Workflows

/**
 * A workflow start, in the Temporal client's terms: its type is the name of one of the workflow
 * functions, and its arguments are that function's parameters.
 */
export type WorkflowStart = {
  readonly [W in WorkflowName]: {
    readonly workflowType: W
    readonly args: Parameters<(typeof Workflows)[W]>
    readonly taskQueue: string
    readonly workflowId: string
    /** Set for deliveries: an id is never run twice, even after its workflow closed. */
    readonly workflowIdReusePolicy?: "REJECT_DUPLICATE"
    readonly typedSearchAttributes: ReadonlyArray<SearchAttributePair>
    readonly memo: Record<string, unknown>
    readonly staticSummary: string
  }
}[WorkflowName]

/** Where a workflow stands on the server: still running, closed (however it ended), or unknown. */
export type WorkflowState = "running" | "closed" | "missing"

/** The part of the Temporal client the engine uses. Calls give up on `signal`. */
export interface TemporalCalls {
  /**
   * Throws WorkflowExecutionAlreadyStartedError when the id is taken. `headers` go with the start
   * (the trace context, when tracing is on).
   */
  readonly start: (start: WorkflowStart, signal: AbortSignal, headers?: Headers) => Promise<unknown>
  readonly describe: (workflowId: string, signal: AbortSignal) => Promise<WorkflowState>
  /** Registers the search attributes the starts carry; answers the ones it could not, with why. */
  readonly registerSearchAttributes: (signal: AbortSignal) => Promise<ReadonlyArray<string>>
  /** Resolves once the server answers, rejects past `deadline` (epoch milliseconds). */
  readonly ping: (deadline: number) => Promise<unknown>
}

/** What the fake Temporal of `TemporalGateway.Test` was asked, and the workflows it knows. */
export interface RecordedTemporal {
  readonly starts: Array<WorkflowStart>
  readonly described: Array<string>
  /** Answers to `describe` by workflow id ("running" for any other). */
  readonly states: Map<string, WorkflowState>
  /** Starts and search-attribute registrations, in order. */
  readonly calls: Array<string>
}

/**
 * The engine's Temporal: a client connected on first use (`layer`), or a fake that records what it
 * is asked and answers starts as `onStart` does (`Test`, with `TemporalRecords`).
 */
export class TemporalGateway extends Context.Service<TemporalGateway, TemporalCalls>()("vda/TemporalGateway") {
  static readonly layer = Layer.effect(
    TemporalGateway,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const secrets = yield* TemporalSecrets
      // connects on first use, so the API starts even while Temporal is down; its files are read now
      const options = yield* Effect.try({
        try: () => connectionOptionsOf(config.temporal),
        catch: (error) => (error instanceof StartupError ? error : new StartupError({ message: `TEMPORAL_ADDRESS=${config.temporal.address}: ${String(error)}` }))
      })
      const connection = Connection.lazy(options)
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()).pipe(Effect.ignore))
      return clientGateway(connection, { namespace: config.temporal.namespace, dataConverter: dataConverterOf(secrets) })
    })
  )

  static readonly Test = (onStart: (start: WorkflowStart, signal: AbortSignal) => Promise<unknown> = async () => ({})) =>
    Layer.effectContext(Effect.sync(() => {
      const recorded: RecordedTemporal = { starts: [], described: [], states: new Map(), calls: [] }
      const calls: TemporalCalls = {
        start: (start, signal) => {
          recorded.starts.push(start)
          recorded.calls.push(`start ${start.workflowId}`)
          return onStart(start, signal)
        },
        describe: async (workflowId) => {
          recorded.described.push(workflowId)
          return recorded.states.get(workflowId) ?? "running"
        },
        registerSearchAttributes: async () => {
          recorded.calls.push("register")
          return []
        },
        ping: async () => ({})
      }
      return Context.make(TemporalGateway, calls).pipe(Context.add(TemporalRecords, recorded))
    }))
}

/** The records of `TemporalGateway.Test`. */
export class TemporalRecords extends Context.Service<TemporalRecords, RecordedTemporal>()("vda/TemporalRecords") {}

export interface EngineSettings {
  readonly taskQueues: { readonly operations: string; readonly deliveries: string }
  readonly retry: RetryPolicy
  readonly deliveryRetry: RetryPolicy
  readonly plateHash: (plate: string) => string
}

const operationLabels = (request: StartRequest, hash: string): WorkflowLabels => ({
  accountId: request.accountId,
  environment: request.environment,
  kind: request.kind,
  modules: request.kind === "vehicle" ? "" : modulesKey(request.modules),
  plateHash: hash
})

const labelled = (labels: WorkflowLabels, subject: string) => ({
  typedSearchAttributes: searchAttributesOf(labels),
  ...workflowMetadataOf(labels, subject)
})

export const workflowStart = (request: StartRequest, settings: EngineSettings): WorkflowStart => {
  const hash = settings.plateHash(request.plate)
  const delivery = { deliveryRetry: settings.deliveryRetry, deliveryTaskQueue: settings.taskQueues.deliveries }
  const common = { taskQueue: settings.taskQueues.operations, ...labelled(operationLabels(request, hash), request.operationId) }
  switch (request.kind) {
    case "modules":
      return {
        workflowType: "modulesOperation",
        workflowId: workflowIds.modules({ ...request, plateHash: hash }),
        args: [{ operationId: request.operationId, modules: request.modules, retry: settings.retry, ...delivery }],
        ...common
      }
    case "report":
      return {
        workflowType: "report",
        workflowId: workflowIds.report({ ...request, plateHash: hash }),
        args: [{ operationId: request.operationId, modules: request.modules, retry: settings.retry, ...delivery }],
        ...common
      }
    case "vehicle":
      return {
        workflowType: "vehicleSearch",
        workflowId: workflowIds.vehicle({ ...request, plateHash: hash }),
        args: [{ operationId: request.operationId, retry: settings.retry, ...delivery }],
        ...common
      }
  }
}

export const deliveryStart = (request: DeliveryStartRequest, settings: EngineSettings): WorkflowStart => ({
  workflowType: "webhookDelivery",
  taskQueue: settings.taskQueues.deliveries,
  workflowId: workflowIds.delivery(request.deliveryId, request.series),
  args: [{ deliveryId: request.deliveryId, series: request.series, retry: settings.deliveryRetry }],
  workflowIdReusePolicy: "REJECT_DUPLICATE",
  ...labelled(
    { accountId: request.accountId, environment: request.environment, kind: "delivery", modules: "", plateHash: "" },
    request.deliveryId
  )
})

const propagator = new W3CTraceContextPropagator()

/**
 * A span's context as Temporal headers, in the form the workflow interceptors of
 * @temporalio/interceptors-opentelemetry read: W3C trace context, under their header.
 */
export const traceHeaders = (span: Tracer.AnySpan): Headers => {
  const carrier: Record<string, string> = {}
  const traceFlags = span.sampled ? Otel.TraceFlags.SAMPLED : Otel.TraceFlags.NONE
  const context = Otel.trace.setSpanContext(Otel.ROOT_CONTEXT, { traceId: span.traceId, spanId: span.spanId, traceFlags })
  propagator.inject(context, carrier, Otel.defaultTextMapSetter)
  return { [TRACE_HEADER]: defaultPayloadConverter.toPayload(carrier) }
}

/**
 * A start as a span of the current trace, named as the interceptors package names its own, whose
 * context goes in the start's headers so the workflow's spans continue the trace. Effect's spans
 * are not OpenTelemetry's active context, hence the explicit headers. Without tracing: no span,
 * no headers.
 */
const traced = <A, E>(start: WorkflowStart, run: (headers?: Headers) => Effect.Effect<A, E>) =>
  Effect.flatMap(RequestTracer, (tracer) =>
    Option.isNone(tracer)
      ? run()
      : Effect.useSpan(
        `${SpanName.WORKFLOW_START}${SPAN_DELIMITER}${start.workflowType}`,
        { kind: "client", attributes: { [WORKFLOW_ID_ATTR_KEY]: start.workflowId } },
        (span) => run(traceHeaders(span))
      ))

/** What one reconciler pass did. */
export interface Reconciled {
  /** Operations and deliveries committed but never started, now started. */
  readonly started: number
  /** Workflows the server no longer knew, started again under the same id. */
  readonly restarted: number
  /** Operations and deliveries whose workflow closed without settling them, now final. */
  readonly finalized: number
  /** False when Temporal could not be reached: the pass stopped there. */
  readonly reachable: boolean
}

/** How many stale rows one pass looks at (the rest wait for the next pass). */
const RECONCILE_BATCH = 100

export const makeTemporalEngine = Effect.gen(function*() {
  const gateway = yield* TemporalGateway
  const config = yield* AppConfig
  const repo = yield* OperationsRepo
  const activities = yield* OperationActivities
  const events = yield* OperationEvents
  const deliveries = yield* DeliveryRuns
  const { plateHashSalt } = yield* TemporalSecrets
  const settings: EngineSettings = {
    taskQueues: config.temporal.taskQueues,
    retry: config.sourceRetry,
    deliveryRetry: config.webhookRetry,
    plateHash: (plate) => plateHash(plateHashSalt, plate)
  }
  const deadline = Duration.millis(config.temporal.startTimeoutMs)

  /** One call to Temporal, abandoned (and its RPC cancelled) after the start deadline. */
  const call = <A>(what: string, f: (signal: AbortSignal) => Promise<A>) =>
    Effect.tryPromise({ try: f, catch: (error) => error }).pipe(
      Effect.timeoutOrElse({
        duration: deadline,
        orElse: () => Effect.fail(new Error(`Temporal did not answer within ${Duration.format(deadline)} (${what})`))
      })
    )

  /** Starts (an id already started counts as started); false when it must be tried again later. */
  const startWorkflow = (start: WorkflowStart, markStarted: (at: Date) => Effect.Effect<void>) => {
    const started = traced(start, (headers) =>
      call(start.workflowId, (signal) => gateway.start(start, signal, headers)).pipe(
        Effect.catchIf((error) => error instanceof WorkflowExecutionAlreadyStartedError, () => Effect.void)
      ))
    return started.pipe(
      Effect.andThen(Effect.flatMap(Clock.currentTimeMillis, (now) => markStarted(new Date(now)))),
      Effect.as(true),
      Effect.catch((error) =>
        Effect.as(Effect.logWarning(`workflow ${start.workflowId} not started yet (${describeCause(error)}); the reconciler will start it`), false)
      )
    )
  }

  const start = (request: StartRequest) =>
    startWorkflow(workflowStart(request, settings), (at) => repo.markStarted(request.operationId, at))

  const startDelivery = (request: DeliveryStartRequest) =>
    startWorkflow(deliveryStart(request, settings), (at) => deliveries.markStarted(request.deliveryId, at))

  const describe = (workflowId: string) => call(workflowId, (signal) => gateway.describe(workflowId, signal))

  /** Finalises an operation whose workflow closed without doing so, and sends its event. */
  const finalizeLost = Effect.fnUntraced(function*(operationId: string) {
    if (!(yield* activities.finalizeLost(operationId))) return false
    const deliveryId = yield* events.finalized(operationId)
    const delivery = deliveryId === null ? Option.none() : yield* deliveries.find(deliveryId)
    if (Option.isSome(delivery)) yield* startDelivery(deliveryStartRequestOf(delivery.value))
    return true
  })

  /**
   * Before a pass (re)starts anything: a server that lost its state lost the search attributes
   * too, and refuses starts that carry them. Once per pass, and only when there is something to start.
   */
  const registerAttributes = call("search attributes", (signal) => gateway.registerSearchAttributes(signal)).pipe(
    Effect.flatMap((failures) =>
      failures.length === 0
        ? Effect.void
        : Effect.logWarning(`search attributes not registered (register them as an operator): ${failures.join("; ")}`)
    ),
    Effect.catch((error) => Effect.logWarning(`search attributes not registered (${describeCause(error)})`))
  )

  const reconcile: Effect.Effect<Reconciled> = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const found = { started: 0, restarted: 0, finalized: 0, reachable: true }
    const count = (key: keyof typeof found) => (done: boolean) => Effect.sync(() => done && found[key]++)
    let registered = !config.temporal.worker.registerSearchAttributes
    const beforeStarting = Effect.suspend(() => {
      if (registered) return Effect.void
      registered = true
      return registerAttributes
    })

    // committed but never started (the request's start failed or timed out, or the process died)
    const unstartedBefore = new Date(now - config.temporal.startTimeoutMs - 1_000)
    // (a failed start means Temporal is unreachable: the rest waits for the next pass)
    for (const row of yield* repo.unfinished({ unstartedBefore })) {
      yield* beforeStarting
      if (!(yield* start(startRequestOf(row)))) return { ...found, reachable: false }
      found.started++
    }
    for (const row of yield* deliveries.unstarted(unstartedBefore)) {
      yield* beforeStarting
      if (!(yield* startDelivery(deliveryStartRequestOf(row)))) return { ...found, reachable: false }
      found.started++
    }

    // started, but not moving: is the workflow still there?
    const staleBefore = new Date(now - config.temporal.staleAfterMs)
    for (const row of yield* repo.stale(staleBefore, RECONCILE_BATCH)) {
      const request = startRequestOf(row)
      const state = yield* describe(workflowStart(request, settings).workflowId)
      if (state === "missing") yield* Effect.flatMap(Effect.andThen(beforeStarting, start(request)), count("restarted"))
      if (state === "closed") yield* Effect.flatMap(finalizeLost(row.id), count("finalized"))
    }
    for (const row of yield* deliveries.overdue(staleBefore, RECONCILE_BATCH)) {
      const request = deliveryStartRequestOf(row)
      const state = yield* describe(deliveryStart(request, settings).workflowId)
      if (state === "missing") yield* Effect.flatMap(Effect.andThen(beforeStarting, startDelivery(request)), count("restarted"))
      if (state === "closed") {
        yield* Effect.flatMap(deliveries.settle(row.id, row.series, "the delivery's workflow ended without settling it"), count("finalized"))
      }
    }
    if (found.started + found.restarted + found.finalized > 0) {
      yield* Effect.logInfo(
        `reconciler: ${found.started} started, ${found.restarted} restarted, ${found.finalized} finalized`
      )
    }
    return found
  }).pipe(
    Effect.tap((found) =>
      Effect.sync(() => {
        countFinding("started", found.started)
        countFinding("restarted", found.restarted)
        countFinding("finalized_lost", found.finalized)
      })),
    Effect.catchCause((cause) =>
      Effect.as(Effect.logWarning("reconciler pass failed; trying again next pass", cause), {
        started: 0,
        restarted: 0,
        finalized: 0,
        reachable: false
      })
    )
  )

  return { start: (r: StartRequest) => Effect.asVoid(start(r)), startDelivery: (r: DeliveryStartRequest) => Effect.asVoid(startDelivery(r)), reconcile }
})

const RECONCILER_LEASE = "temporal-reconciler"

/** How long `/readyz` waits for Temporal to answer. */
const READINESS_DEADLINE_MS = 1_000

/** The headers of the start being made, for the interceptor below: set around one start only. */
const startHeaders = new AsyncLocalStorage<Headers>()

/** The client takes a start's headers from its interceptors only. */
const startHeadersInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) => {
    const headers = startHeaders.getStore()
    return next(headers === undefined ? input : { ...input, headers: { ...input.headers, ...headers } })
  }
}

/** A Temporal client on `connection`, as the engine's gateway. */
export const clientGateway = (
  connection: ConnectionLike,
  options: { readonly namespace: string; readonly dataConverter: DataConverter }
): TemporalCalls => {
  const client = new Client({ connection, ...options, interceptors: { workflow: [startHeadersInterceptor] } })
  return {
    start: (s, signal, headers) => {
      const startWorkflow = () =>
        client.workflow.start(s.workflowType, {
          taskQueue: s.taskQueue,
          workflowId: s.workflowId,
          args: [...s.args],
          ...(s.workflowIdReusePolicy ? { workflowIdReusePolicy: s.workflowIdReusePolicy } : {}),
          typedSearchAttributes: [...s.typedSearchAttributes],
          memo: s.memo,
          staticSummary: s.staticSummary
        })
      return connection.withAbortSignal(signal, () =>
        headers === undefined ? startWorkflow() : startHeaders.run(headers, startWorkflow))
    },
    describe: (workflowId, signal) =>
      connection.withAbortSignal(signal, () => client.workflow.getHandle(workflowId).describe()).then(
        (description): WorkflowState => (description.status.name === "RUNNING" ? "running" : "closed"),
        (error) => {
          if (error instanceof WorkflowNotFoundError) return "missing"
          throw error
        }
      ),
    registerSearchAttributes: (signal) =>
      connection.withAbortSignal(signal, () => registerSearchAttributes(connection, options.namespace)),
    ping: (deadline) => connection.withDeadline(deadline, () => connection.workflowService.getSystemInfo({}))
  }
}

export const TemporalEngineLive = Layer.effect(
  WorkflowEngine,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const leases = yield* Leases
    const gateway = yield* TemporalGateway
    const engine = yield* makeTemporalEngine

    const interval = config.temporal.reconcileIntervalMs
    // a process that cannot reach Temporal lets go of the lease, so one that can takes over
    const pass = leases.acquire(RECONCILER_LEASE, interval * 3).pipe(
      Effect.flatMap((held) => (held ? engine.reconcile : Effect.succeed({ reachable: true }))),
      Effect.flatMap(({ reachable }) => (reachable ? Effect.void : leases.release(RECONCILER_LEASE))),
      Effect.catchCause((cause) => Effect.logWarning("reconciler could not take its lease", cause))
    )
    yield* Effect.addFinalizer(() => leases.release(RECONCILER_LEASE).pipe(Effect.ignore))
    yield* Effect.forkScoped(pass.pipe(Effect.repeat(Schedule.spaced(Duration.millis(interval)))))
    const readiness = Effect.tryPromise(() => gateway.ping(Date.now() + READINESS_DEADLINE_MS)).pipe(
      Effect.as<EngineReadiness>({ engine: "temporal", up: true }),
      // the probe is public: where Temporal lives goes to the log, not to the answer
      Effect.catch(() =>
        Effect.as(
          Effect.logWarning(`not ready: Temporal at ${config.temporal.address} does not answer`),
          { engine: "temporal", up: false, detail: "the workflow engine does not answer" } satisfies EngineReadiness
        ))
    )

    return WorkflowEngine.of({ start: engine.start, startDelivery: engine.startDelivery, readiness })
  })
).pipe(Layer.provide(TemporalGateway.layer), Layer.provide(temporalSecretsLayer("api")))
