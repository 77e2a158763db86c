/**
 * The worker's traces, offline: an activity runs in the span of the interceptors package (on the
 * process's tracer), continuing the trace its headers carry; the Effect spans of its program are
 * children of that span, and its log lines carry the trace and the operation or delivery, even
 * outside the program's own spans. The workflows' spans, handed over by the sandbox's sink, reach
 * the same exporter as spans the OpenTelemetry 2.x SDK can export.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Otel from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import type { Headers } from "@temporalio/common"
import type { SerializableSpan } from "@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js"
import { MockActivityEnvironment } from "@temporalio/testing"
import { DefaultLogger } from "@temporalio/worker"
import type { WorkflowInfo } from "@temporalio/workflow"
import { Effect, Layer, Option, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ActivitiesTest } from "../../src/ActivitiesLive.js"
import { traceHeaders } from "../../src/operations/TemporalEngine.js"
import { loggerLayer } from "../../src/platform/observability/Logging.js"
import { RequestTracer, SpanPipeline, TelemetryLive } from "../../src/platform/observability/Telemetry.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { activityInterceptors, workflowSpanSinks } from "../../worker/Tracing.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"
import { deliveryTo, insertOperation, newAccount, rejection, WorkerActivities } from "../support/WorkerActivities.js"

const exporter = new InMemorySpanExporter()
const lines: Array<Record<string, unknown>> = []

/** The activities on the worker's telemetry; every webhook endpoint takes what it is sent. */
const Services = WorkerActivities.layer.pipe(
  Layer.provideMerge(ActivitiesTest({})),
  Layer.provideMerge(Accounts.layer),
  Layer.provideMerge(Layer.mergeAll(
    TelemetryLive({ serviceName: "vehicle-data-worker", spanProcessor: new SimpleSpanProcessor(exporter) }),
    loggerLayer("json", "Info", (line) => lines.push(JSON.parse(line)))
  )),
  Layer.provideMerge(freshDatabaseLayer(2)),
  Layer.provideMerge(testConfig())
)

/** What the activity's run records from now on (the setup before it traces and logs too). */
const forget = Effect.sync(() => {
  exporter.reset()
  lines.length = 0
})

/** A mock activity environment of `activityType`, with the worker's tracing interceptors. */
const environment = (activityType: string) =>
  Effect.map(RequestTracer, (tracer) =>
    new MockActivityEnvironment({ activityType, activityId: "7" }, {
      interceptors: activityInterceptors(Option.getOrThrow(tracer)).activity!,
      logger: new DefaultLogger("ERROR")
    }))

/** MockActivityEnvironment runs with empty headers; a scheduled activity gets its workflow's. */
const runWithHeaders = <A>(env: MockActivityEnvironment, fn: (...args: Array<any>) => Promise<A>, args: Array<unknown>, headers: Headers) =>
  (env as unknown as { activity: { runNoEncoding: (f: typeof fn, input: { args: Array<unknown>; headers: Headers }) => Promise<A> } })
    .activity.runNoEncoding(fn, { args, headers })

const span = (name: string): ReadableSpan => {
  const found = exporter.getFinishedSpans().find((s) => s.name === name)
  if (found === undefined) throw new Error(`no span ${name} among ${exporter.getFinishedSpans().map((s) => s.name).join(", ")}`)
  return found
}

const modulesOperation = Effect.flatMap(newAccount, (accountId) =>
  insertOperation(accountId, "production", "AB123CD", { kind: "modules", modules: ["fines"] }))

/** The span a scheduling workflow hands its activities in their headers. */
const scheduling = Tracer.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" })

// the activities run on the worker's runtime and the real clock: no test services
layer(Services, { excludeTestServices: true })("the worker's traces", (it) => {
  describe("an activity's trace", () => {
    it.effect("the program's Effect spans are children of the activity's span", () =>
      Effect.gen(function*() {
        const { markProcessing } = yield* WorkerActivities
        const operationId = yield* modulesOperation
        const env = yield* environment("markProcessing")
        yield* forget
        yield* Effect.promise(() => env.run(markProcessing, operationId))
        const activity = span("RunActivity:markProcessing")
        const program = span("activity.markProcessing")
        expect(activity.attributes).toMatchObject({ temporalActivityId: "7" })
        expect(program.spanContext().traceId).toBe(activity.spanContext().traceId)
        expect(program.parentSpanContext?.spanId).toBe(activity.spanContext().spanId)
        expect(activity.resource.attributes["service.name"]).toBe("vehicle-data-worker")
      }))

    it.effect("its log lines carry the trace and the operation", () =>
      Effect.gen(function*() {
        const { recordModule } = yield* WorkerActivities
        const operationId = yield* modulesOperation
        const env = yield* environment("recordModule")
        yield* forget
        const outcome = { status: "completed" as const, data: { total: 0, items: [] }, error: null, warnings: [] }
        yield* Effect.promise(() => env.run(recordModule, { operationId, module: "fines" as const, outcome }))
        expect(lines).toContainEqual(expect.objectContaining({
          message: "module fines completed",
          operationId,
          traceId: span("RunActivity:recordModule").spanContext().traceId,
          spanId: span("activity.recordModule").spanContext().spanId
        }))
      }))

    it.effect("continues the trace its headers carry (the workflow's); a delivery's lines carry the delivery", () =>
      Effect.gen(function*() {
        const { attemptDelivery } = yield* WorkerActivities
        const deliveryId = yield* Effect.flatMap(newAccount, (accountId) => deliveryTo(accountId, "https://hooks.example.com/vda"))
        const env = yield* environment("attemptDelivery")
        yield* forget
        const input = { deliveryId, policy: DELIVERY_RETRY }
        expect(yield* Effect.promise(() => runWithHeaders(env, attemptDelivery, [input], traceHeaders(scheduling)))).toBe("processed")
        const activity = span("RunActivity:attemptDelivery")
        expect(activity.spanContext().traceId).toBe(scheduling.traceId)
        expect(activity.parentSpanContext?.spanId).toBe(scheduling.spanId)
        expect(span("activity.attemptDelivery").parentSpanContext?.spanId).toBe(activity.spanContext().spanId)
        expect(lines).toContainEqual(expect.objectContaining({
          message: "delivery attempt 1 succeeded: HTTP 200",
          deliveryId,
          traceId: scheduling.traceId,
          spanId: span("webhook.delivery.attempt").spanContext().spanId
        }))
      }))

    it.effect("a line outside the program's own spans (its defect's) carries the delivery and the activity's span", () =>
      Effect.gen(function*() {
        const { attemptDelivery } = yield* WorkerActivities
        const deliveryId = yield* Effect.flatMap(newAccount, (accountId) => deliveryTo(accountId, "https://hooks.example.com/vda"))
        // a row the database accepts and the delivery's schema does not: reading it is a defect
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`update webhook_deliveries set attempts = -1 where id = ${deliveryId}::uuid`)
        const env = yield* environment("attemptDelivery")
        yield* forget
        const input = { deliveryId, policy: DELIVERY_RETRY }
        expect(yield* rejection(() => runWithHeaders(env, attemptDelivery, [input], traceHeaders(scheduling)))).toMatchObject({ type: "Defect" })
        expect(lines).toContainEqual(expect.objectContaining({
          message: expect.stringMatching(/^activity attemptDelivery failed unexpectedly/),
          deliveryId,
          traceId: scheduling.traceId,
          spanId: span("RunActivity:attemptDelivery").spanContext().spanId
        }))
      }))
  })

  describe("the workflows' spans", () => {
    const info = { workflowId: "modules/sandbox/acct/hash/fines/op_1", runId: "run-1" } as WorkflowInfo
    const serialized: SerializableSpan = {
      name: "StartActivity:fetchModule",
      kind: Otel.SpanKind.INTERNAL,
      spanContext: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "b7ad6b7169203331", traceFlags: 1, traceState: "vda=1" },
      parentSpanId: "00f067aa0ba902b7",
      startTime: [1767225600, 0],
      endTime: [1767225600, 5_000_000],
      status: { code: Otel.SpanStatusCode.OK },
      attributes: {},
      links: [],
      events: [],
      duration: [0, 5_000_000],
      ended: true,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
      instrumentationLibrary: { name: "@temporalio/interceptor-workflow" }
    }

    it.effect("reach the process's exporter with their ids, parent, scope and resource", () =>
      Effect.gen(function*() {
        const pipeline = yield* SpanPipeline
        yield* forget
        yield* Effect.promise(async () => workflowSpanSinks(pipeline).exporter.export.fn(info, [serialized]))
        const exported = span("StartActivity:fetchModule")
        expect(exported.spanContext()).toMatchObject({ traceId: serialized.spanContext.traceId, spanId: serialized.spanContext.spanId, traceFlags: 1 })
        expect(exported.spanContext().traceState?.get("vda")).toBe("1")
        expect(exported.parentSpanContext).toMatchObject({ traceId: serialized.spanContext.traceId, spanId: "00f067aa0ba902b7" })
        expect(exported.instrumentationScope.name).toBe("@temporalio/interceptor-workflow")
        expect(exported.attributes).toMatchObject({ temporalWorkflowId: info.workflowId, run_id: "run-1" })
        expect(exported.resource.attributes["service.name"]).toBe("vehicle-data-worker")
      }))

    it.effect("are dropped without tracing", () =>
      Effect.gen(function*() {
        yield* forget
        yield* Effect.promise(async () => workflowSpanSinks(Option.none()).exporter.export.fn(info, [serialized]))
        expect(exporter.getFinishedSpans()).toEqual([])
      }))
  })
})
