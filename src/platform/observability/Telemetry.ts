/**
 * Traces and metrics, for the API and the worker alike.
 *
 * - Tracing is on only when OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test gives a span
 *   processor). Otherwise Effect's tracer is disabled, so the spans written in the code cost a
 *   no-op and nothing is exported.
 * - Metrics are Effect `Metric`s, always kept, read by a Prometheus reader that the admin
 *   listener serves (`AdminServer`). Gauges that mirror a state (the pool, the event loop, the
 *   oldest pending delivery) are refreshed just before each scrape (`onScrape`).
 */
import { OtelMetrics, OtelTracer, Resource as OtelResource } from "@effect/opentelemetry"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import type * as Otel from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
import type * as OtelResources from "@opentelemetry/resources"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Context, Effect, Layer, Metric, Option, References } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { AppConfig, type TelemetryConfig } from "../config/Config.js"

/** The Prometheus reader of this process's metrics. */
export class MetricsReader extends Context.Service<MetricsReader, PrometheusExporter>()("vda/MetricsReader") {}

/** The OpenTelemetry tracer requests are traced with; none when tracing is off. */
export class RequestTracer extends Context.Reference<Option.Option<Otel.Tracer>>("vda/RequestTracer", {
  defaultValue: () => Option.none()
}) {}

/**
 * Where the tracer's spans go: for spans made elsewhere and handed over whole, ids included (the
 * Temporal workflows' spans, made in their sandbox). None when tracing is off.
 */
export class SpanPipeline extends Context.Reference<Option.Option<{ readonly processor: SpanProcessor; readonly resource: OtelResources.Resource }>>(
  "vda/SpanPipeline",
  { defaultValue: () => Option.none() }
) {}

/** Whether a span is a real one, to be exported (a disabled tracer's spans have no trace id). */
export const isRecordedSpan = (span: { readonly traceId: string }) => span.traceId.length === 32

type Refresh = () => void | Promise<void>
const refreshers = new Set<Refresh>()

/** Runs `refresh` before every scrape until the returned function is called. */
export const onScrape = (refresh: Refresh) => {
  refreshers.add(refresh)
  return () => void refreshers.delete(refresh)
}

/** How long a scrape waits for one gauge's source (the database, say) before answering without it. */
const REFRESH_DEADLINE_MS = 500

/**
 * Brings every state-mirroring gauge up to date. A refresher that fails, or does not answer
 * within the deadline, leaves its gauge as it was: a scrape always answers, and in time.
 */
export const refreshGauges = async () => {
  await Promise.all([...refreshers].map((refresh) =>
    new Promise<void>((resolve) => {
      const deadline = setTimeout(resolve, REFRESH_DEADLINE_MS)
      Promise.resolve().then(refresh).catch(() => undefined).finally(() => {
        clearTimeout(deadline)
        resolve()
      })
    })
  ))
}

/**
 * A metric's labels (attributes), as `labelSets` builds them once per set of values: the context a
 * metric reads its attributes from, so an update adds nothing to a context (`Metric.withAttributes`
 * adds its attributes to the context of each update).
 */
export type Labels = Context.Context<never>

const NO_LABELS: Labels = Context.empty()

/**
 * A metric's label sets for the label `names`, each built once and found again by its values
 * (one map per label, no key built): updating a metric on a hot path with
 * `updateUnsafe(metric, value, labelsOf(...values))` allocates no label.
 */
export const labelSets = (...names: ReadonlyArray<string>) => {
  type Level = Map<string | number, Level | Labels>
  const root: Level = new Map()
  return (...values: ReadonlyArray<string | number>): Labels => {
    let level = root
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Level | undefined
      if (next === undefined) level.set(values[i]!, next = new Map())
      level = next
    }
    const last = values[values.length - 1]!
    let labels = level.get(last) as Labels | undefined
    if (labels === undefined) {
      labels = Context.make(Metric.CurrentMetricAttributes, Object.fromEntries(names.map((name, i) => [name, String(values[i] ?? "")])))
      level.set(last, labels)
    }
    return labels
  }
}

/**
 * Updates `metric` with `value` under `labels` (from `labelSets`, or none), outside any fiber:
 * the counters and histograms on every request's path, and the gauges refreshed at a scrape.
 */
export const updateUnsafe = <Input>(metric: Metric.Metric<Input, any>, value: Input, labels: Labels = NO_LABELS) =>
  metric.updateUnsafe(value, labels)

/** Seconds, from 1 ms to 30 s: request, operation and delivery durations. */
export const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const eventLoopLag = Metric.gauge("vda_event_loop_lag_seconds", {
  description: "The event loop's delay, 99th percentile since the last scrape"
})

/** The event loop's lag, sampled continuously and read at each scrape. */
const EventLoopLagLive = Layer.effectDiscard(Effect.acquireRelease(
  Effect.sync(() => {
    const histogram = monitorEventLoopDelay({ resolution: 10 })
    histogram.enable()
    const unregister = onScrape(() => {
      updateUnsafe(eventLoopLag, histogram.count > 0 ? histogram.percentile(99) / 1e9 : 0)
      histogram.reset()
    })
    return () => {
      unregister()
      histogram.disable()
    }
  }),
  (stop) => Effect.sync(stop)
))

export interface TelemetryOptions {
  /** The service's name in traces unless OTEL_SERVICE_NAME says otherwise. */
  readonly serviceName: string
  /** Spans go here instead of to OTLP (tests). */
  readonly spanProcessor?: SpanProcessor | undefined
}

const spanProcessorOf = (config: TelemetryConfig, options: TelemetryOptions): Option.Option<SpanProcessor> =>
  options.spanProcessor !== undefined
    ? Option.some(options.spanProcessor)
    : Option.map(config.otlpEndpoint, (endpoint) =>
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` })))

/**
 * The process's telemetry: the metrics reader, the event-loop lag, and tracing when configured.
 * Provides `MetricsReader` and, with tracing, `RequestTracer` and Effect's tracer.
 */
export const TelemetryLive = (options: TelemetryOptions) =>
  Layer.unwrap(Effect.map(AppConfig, (config) => {
    const reader = new PrometheusExporter({ preventServerStart: true })
    const processor = spanProcessorOf(config.telemetry, options)
    const resource = OtelResource.layer({
      serviceName: Option.getOrElse(config.telemetry.serviceName, () => options.serviceName),
      serviceVersion: process.env.npm_package_version ?? "0.1.0"
    })
    const metrics = OtelMetrics.layer(() => reader)
    const tracing = Option.match(processor, {
      onNone: () => Layer.succeed(References.TracerEnabled, false),
      onSome: (processor) =>
        Layer.effectContext(Effect.gen(function*() {
          const tracer = yield* OtelTracer.OtelTracer
          const resource = yield* OtelResource.Resource
          return Context.make(RequestTracer, Option.some(tracer)).pipe(
            Context.add(SpanPipeline, Option.some({ processor, resource }))
          )
        })).pipe(
          Layer.provideMerge(OtelTracer.layer),
          Layer.provide(NodeSdk.layerTracerProvider(processor))
        )
    })
    return Layer.mergeAll(Layer.succeed(MetricsReader, reader), EventLoopLagLive, metrics, tracing).pipe(Layer.provide(resource))
  }))
