/**
 * The worker's traces on Temporal's side, with @temporalio/interceptors-opentelemetry: each
 * activity runs in a span continuing the trace of the workflow that scheduled it (the activity
 * adapters make that span the parent of the program's Effect spans), and the workflows' spans,
 * made in the sandbox by `workflows/interceptors.ts`, come out through the `exporter` sink. All
 * of them go through the process's tracer, the one Effect's spans use: one pipeline, one exporter.
 * Without tracing there are no interceptors and the sink drops what the workflows hand it.
 */
import * as Otel from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { RUN_ID_ATTR_KEY, WORKFLOW_ID_ATTR_KEY } from "@temporalio/interceptors-opentelemetry/lib/instrumentation.js"
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor
} from "@temporalio/interceptors-opentelemetry/lib/worker/index.js"
import type { OpenTelemetrySinks, SerializableSpan } from "@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js"
import type { InjectedSinks, WorkerInterceptors } from "@temporalio/worker"
import type { WorkflowInfo } from "@temporalio/workflow"
import { Option } from "effect"
import type { SpanPipeline } from "../src/platform/observability/Telemetry.js"

/** Where spans go when tracing is on: the value SpanPipeline holds. */
type SpanDestination = Option.Option.Value<(typeof SpanPipeline)["Service"]>

/**
 * A workflow span as the SDK's processors take it. The workflow side builds its spans with
 * OpenTelemetry 1.x (`parentSpanId`, `instrumentationLibrary`); this process runs 2.x.
 */
const readableSpan = (span: SerializableSpan, info: WorkflowInfo, resource: SpanDestination["resource"]): ReadableSpan => {
  const { traceState, ...ids } = span.spanContext
  const spanContext: Otel.SpanContext = traceState === undefined ? ids : { ...ids, traceState: Otel.createTraceState(traceState) }
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => spanContext,
    ...(span.parentSpanId === undefined
      ? {}
      : { parentSpanContext: { traceId: ids.traceId, spanId: span.parentSpanId, traceFlags: ids.traceFlags } }),
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: { ...span.attributes, [WORKFLOW_ID_ATTR_KEY]: info.workflowId, [RUN_ID_ATTR_KEY]: info.runId },
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource,
    instrumentationScope: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount
  }
}

/** The `exporter` sink the workflow interceptors hand their spans to (never called on replay). */
export const workflowSpanSinks = (pipeline: Option.Option<SpanDestination>): InjectedSinks<OpenTelemetrySinks> => {
  return {
    exporter: {
      export: {
        fn: (info, spans) => {
          if (Option.isNone(pipeline)) return
          for (const span of spans) pipeline.value.processor.onEnd(readableSpan(span, info, pipeline.value.resource))
        }
      }
    }
  }
}

/**
 * The activity interceptors, with tracing. They read the workflow's context from the activity's
 * headers and run the activity in its span through OpenTelemetry's propagation and active
 * context, so this registers W3C propagation and an AsyncLocalStorage context manager for the
 * process (done once; later calls change nothing).
 */
export const activityInterceptors = (tracer: Otel.Tracer): WorkerInterceptors => {
  Otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  const contextManager = new AsyncLocalStorageContextManager()
  if (Otel.context.setGlobalContextManager(contextManager)) contextManager.enable()
  return {
    activity: [(context) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(context, { tracer }),
      outbound: new OpenTelemetryActivityOutboundInterceptor(context)
    })]
  }
}
