/**
 * The worker's traces, offline: an activity runs in the span of the interceptors package (on the
 * process's tracer), continuing the trace its headers carry; the Effect spans of its program are
 * children of that span, and its log lines carry the trace and the operation or delivery. The
 * workflows' spans, handed over by the sandbox's sink, reach the same exporter as spans the
 * OpenTelemetry 2.x SDK can export.
 */
import * as Otel from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import type { Headers } from "@temporalio/common"
import type { SerializableSpan } from "@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js"
import { MockActivityEnvironment } from "@temporalio/testing"
import { DefaultLogger } from "@temporalio/worker"
import type { WorkflowInfo } from "@temporalio/workflow"
import { Effect, Layer, ManagedRuntime, Option, Tracer } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { OperationActivities } from "../../src/operations/Activities.js"
import { traceHeaders } from "../../src/operations/TemporalEngine.js"
import { loggerLayer } from "../../src/platform/observability/Logging.js"
import { RequestTracer, SpanPipeline, TelemetryLive } from "../../src/platform/observability/Telemetry.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { createActivities } from "../../worker/Activities.js"
import { activityInterceptors, workflowSpanSinks } from "../../worker/Tracing.js"
import { testConfig } from "../support/TestApp.js"

const exporter = new InMemorySpanExporter()
const lines: Array<Record<string, unknown>> = []

/** Only what the tests call: one logs inside a span of its own, the other outside any. */
const fake = OperationActivities.of({
  markProcessing: (operationId: string) => Effect.withSpan(Effect.logInfo("marking"), "markProcessing.program", { attributes: { operationId } }),
  attemptDelivery: () => Effect.andThen(Effect.logInfo("delivering"), Effect.withSpan(Effect.succeed("processed" as const), "attemptDelivery.program"))
} as unknown as OperationActivities["Service"])

const runtime = ManagedRuntime.make(Layer.mergeAll(
  Layer.succeed(OperationActivities, fake),
  TelemetryLive({ serviceName: "vehicle-data-worker", spanProcessor: new SimpleSpanProcessor(exporter) }),
  loggerLayer("json", "Info", (line) => lines.push(JSON.parse(line)))
).pipe(Layer.provide(testConfig())))
const activities = createActivities(runtime)
let tracer: Otel.Tracer
let interceptors: ReturnType<typeof activityInterceptors>

beforeAll(async () => {
  tracer = Option.getOrThrow(await runtime.runPromise(RequestTracer))
  interceptors = activityInterceptors(tracer)
})
afterAll(() => runtime.dispose())
beforeEach(() => {
  exporter.reset()
  lines.length = 0
})

const environment = (activityType: string) =>
  new MockActivityEnvironment({ activityType, activityId: "7" }, { interceptors: interceptors.activity!, logger: new DefaultLogger("ERROR") })

/** MockActivityEnvironment runs with empty headers; a scheduled activity gets its workflow's. */
const runWithHeaders = <A>(env: MockActivityEnvironment, fn: (...args: Array<any>) => Promise<A>, args: Array<unknown>, headers: Headers) =>
  (env as unknown as { activity: { runNoEncoding: (f: typeof fn, input: { args: Array<unknown>; headers: Headers }) => Promise<A> } })
    .activity.runNoEncoding(fn, { args, headers })

const span = (name: string): ReadableSpan => {
  const found = exporter.getFinishedSpans().find((s) => s.name === name)
  if (found === undefined) throw new Error(`no span ${name} among ${exporter.getFinishedSpans().map((s) => s.name).join(", ")}`)
  return found
}

describe("an activity's trace", () => {
  it("the program's Effect spans are children of the activity's span", async () => {
    await environment("markProcessing").run(activities.markProcessing, "op_1")
    const activity = span("RunActivity:markProcessing")
    const program = span("markProcessing.program")
    expect(activity.attributes).toMatchObject({ temporalActivityId: "7" })
    expect(program.spanContext().traceId).toBe(activity.spanContext().traceId)
    expect(program.parentSpanContext?.spanId).toBe(activity.spanContext().spanId)
    expect(activity.resource.attributes["service.name"]).toBe("vehicle-data-worker")
  })

  it("its log lines carry the trace and the operation", async () => {
    await environment("markProcessing").run(activities.markProcessing, "op_1")
    expect(lines).toContainEqual(expect.objectContaining({
      message: "marking",
      operationId: "op_1",
      traceId: span("RunActivity:markProcessing").spanContext().traceId,
      spanId: span("markProcessing.program").spanContext().spanId
    }))
  })

  it("continues the trace its headers carry (the workflow's); a delivery's lines carry the delivery and the activity's span", async () => {
    const scheduling = Tracer.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" })
    const input = { deliveryId: "8f0c2d6e-5b1a-4c3e-9d7f-1a2b3c4d5e6f", policy: DELIVERY_RETRY }
    const env = environment("attemptDelivery")
    await expect(runWithHeaders(env, activities.attemptDelivery, [input], traceHeaders(scheduling))).resolves.toBe("processed")
    const activity = span("RunActivity:attemptDelivery")
    expect(activity.spanContext().traceId).toBe(scheduling.traceId)
    expect(activity.parentSpanContext?.spanId).toBe(scheduling.spanId)
    expect(span("attemptDelivery.program").parentSpanContext?.spanId).toBe(activity.spanContext().spanId)
    expect(lines).toContainEqual(expect.objectContaining({
      message: "delivering",
      deliveryId: input.deliveryId,
      traceId: scheduling.traceId,
      spanId: activity.spanContext().spanId
    }))
  })
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

  it("reach the process's exporter with their ids, parent, scope and resource", async () => {
    await workflowSpanSinks(await runtime.runPromise(SpanPipeline)).exporter.export.fn(info, [serialized])
    const exported = span("StartActivity:fetchModule")
    expect(exported.spanContext()).toMatchObject({ traceId: serialized.spanContext.traceId, spanId: serialized.spanContext.spanId, traceFlags: 1 })
    expect(exported.spanContext().traceState?.get("vda")).toBe("1")
    expect(exported.parentSpanContext).toMatchObject({ traceId: serialized.spanContext.traceId, spanId: "00f067aa0ba902b7" })
    expect(exported.instrumentationScope.name).toBe("@temporalio/interceptor-workflow")
    expect(exported.attributes).toMatchObject({ temporalWorkflowId: info.workflowId, run_id: "run-1" })
    expect(exported.resource.attributes["service.name"]).toBe("vehicle-data-worker")
  })

  it("are dropped without tracing", async () => {
    await workflowSpanSinks(Option.none()).exporter.export.fn(info, [serialized])
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
