/**
 * The API's workflow starts and the trace, through the real Temporal client on a fake connection
 * (the start request is read where it would go to the server): with tracing on, the start is a
 * span of the request's trace and its context travels in the start's headers, in the form the
 * workflow interceptors read; with tracing off, no span and no header.
 */
import * as Otel from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import type { ConnectionLike } from "@temporalio/client"
import { defaultPayloadConverter } from "@temporalio/common"
import type { temporal } from "@temporalio/proto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ActivitiesLive } from "../../src/ActivitiesLive.js"
import { clientGateway, makeTemporalEngine, TemporalGateway } from "../../src/operations/TemporalEngine.js"
import type { StartRequest } from "../../src/operations/WorkflowEngine.js"
import { TelemetryLive } from "../../src/platform/observability/Telemetry.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"
import { temporalSecretsLayer } from "../../src/platform/temporal/TemporalSecrets.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"

type StartRequestProto = temporal.api.workflowservice.v1.IStartWorkflowExecutionRequest

/** A connection that answers every start and keeps its request. */
const fakeConnection = () => {
  const requests: Array<StartRequestProto> = []
  const connection = {
    workflowService: {
      startWorkflowExecution: async (request: StartRequestProto) => {
        requests.push(request)
        return { runId: "run-1", started: true }
      }
    },
    operatorService: {},
    plugins: [],
    close: async () => {},
    ensureConnected: async () => {},
    withDeadline: (_: unknown, fn: () => Promise<unknown>) => fn(),
    withMetadata: (_: unknown, fn: () => Promise<unknown>) => fn(),
    withAbortSignal: (_: unknown, fn: () => Promise<unknown>) => fn()
  } as unknown as ConnectionLike
  return { connection, requests }
}

const request: StartRequest = {
  kind: "modules",
  operationId: "op_traced",
  accountId: "acct_1",
  environment: "sandbox",
  plate: "AB123CD",
  modules: ["fines", "vtv"]
}

/**
 * The engine, on the services a process has, starts one operation inside a request's span, traced
 * to `exporter` if given; what reached the connection, and the spans ended by then (read while the
 * services live: closing them shuts the exporter).
 */
const startWithin = (exporter?: InMemorySpanExporter) =>
  Effect.gen(function*() {
    const { connection, requests } = fakeConnection()
    const engine = yield* makeTemporalEngine.pipe(
      Effect.provideService(TemporalGateway, clientGateway(connection, { namespace: "default", dataConverter: {} }))
    )
    yield* engine.start(request).pipe(Effect.withSpan("POST /v2/vehicles/{plate}/modules", { kind: "server" }))
    expect(requests).toHaveLength(1)
    return { sent: requests[0]!, spans: exporter?.getFinishedSpans() ?? [] }
  }).pipe(Effect.provide(Layer.mergeAll(
    ActivitiesLive,
    TelemetryLive({
      serviceName: "vehicle-data-api",
      ...(exporter === undefined ? {} : { spanProcessor: new SimpleSpanProcessor(exporter) })
    })
  ).pipe(
    Layer.provide(freshDatabaseLayer(2)),
    Layer.provideMerge(temporalSecretsLayer("api")),
    Layer.provideMerge(testConfig({ TEMPORAL_TASK_QUEUE: "vda-test", TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS, PLATE_HASH_SALT: "trace-test-salt" }))
  )))

describe("a workflow start's trace", () => {
  it.effect("with tracing on, the start is a span of the request's trace, carried in the start's headers", () =>
    Effect.gen(function*() {
      const exporter = new InMemorySpanExporter()
      const { sent, spans } = yield* startWithin(exporter)
      expect(sent.workflowType?.name).toBe("modulesOperation")
      const requestSpan = spans.find((s) => s.name === "POST /v2/vehicles/{plate}/modules")!
      const startSpan = spans.find((s) => s.name === "StartWorkflow:modulesOperation")!
      expect(startSpan.kind).toBe(Otel.SpanKind.CLIENT)
      expect(startSpan.attributes.temporalWorkflowId).toBe(sent.workflowId)
      expect(startSpan.spanContext().traceId).toBe(requestSpan.spanContext().traceId)
      expect(startSpan.parentSpanContext?.spanId).toBe(requestSpan.spanContext().spanId)

      const header = sent.header?.fields?.["_tracer-data"]
      expect(header).toBeDefined()
      expect(defaultPayloadConverter.fromPayload(header!)).toEqual({
        traceparent: `00-${startSpan.spanContext().traceId}-${startSpan.spanContext().spanId}-01`
      })
      expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(request.plate)
    }))

  it.effect("with tracing off, no header", () =>
    Effect.gen(function*() {
      const { sent } = yield* startWithin()
      expect(sent.workflowType?.name).toBe("modulesOperation")
      expect(sent.header?.fields ?? {}).toEqual({})
    }))
})
