/**
 * Every request a listener takes, observed once at the Node level, whichever app serves it (the
 * API or the console): its count and duration by route template and status, its access-log line,
 * and, with tracing on, its server span, which the request's Effect program continues
 * (`withRequestSpan`). The route is the contract's template (`/v2/vehicles/{plate}`), so neither
 * a metric label, a span name nor a log line ever holds a plate.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { performance } from "node:perf_hooks"
import { OtelTracer } from "@effect/opentelemetry"
import * as Otel from "@opentelemetry/api"
import { type Effect, Metric, Option } from "effect"
import { Headers, HttpTraceContext } from "effect/http"
import type { AccessLog } from "./Logging.js"
import type { Environment } from "../http/RequestContext.js"
import { durationBuckets, labelSets, updateUnsafe } from "./Telemetry.js"

export type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void

/** What the serving path learns about a request that its observation reports. */
interface Observed {
  requestId: string | undefined
  accountId: string | undefined
  readonly span: Otel.Span | undefined
}

// On the request itself, not in a WeakMap beside it: V8 records every new key of a WeakMap for the
// next young collection, which then traces each entry as an ephemeron. For one entry per request
// that was 1.5% of the main thread's time under load, and the property costs next to nothing.
const OBSERVED = Symbol("vda/observed")
type Observable = { [OBSERVED]?: Observed }

const observedOf = (source: unknown): Observed | undefined =>
  typeof source === "object" && source !== null ? (source as Observable)[OBSERVED] : undefined

/** The request id a request is answered with. */
export const noteRequestId = (source: unknown, requestId: string) => {
  const observed = observedOf(source)
  if (observed !== undefined) observed.requestId = requestId
}

/** The account a request was admitted for (`source` is the server's own request object). */
export const noteAccount = (source: unknown, accountId: string) => {
  const observed = observedOf(source)
  if (observed !== undefined) observed.accountId = accountId
}

/** Runs a request's program under its server span, when it has one (tracing on). */
export const withRequestSpan = (source: unknown) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const span = observedOf(source)?.span
  return span === undefined ? effect : OtelTracer.withSpanContext(effect, span.spanContext()) as Effect.Effect<A, E, R>
}

const requests = Metric.counter("vda_http_requests", {
  description: "Requests answered, by listener environment, method, route template and status",
  incremental: true
})

const durations = Metric.histogram("vda_http_request_duration_seconds", {
  boundaries: Metric.boundariesFromIterable(durationBuckets),
  description: "Time from a request's arrival to the end of its answer, by environment, method, route template and status"
})

/** A request its client gave up on before the answer was complete (nginx's convention). */
const CLIENT_CLOSED = 499

export interface ObserverOptions {
  readonly environment: Environment
  /** The route template of a request URL (RequestInput.makeRouteResolver). */
  readonly routeOf: (url: string) => string
  readonly tracer: Option.Option<Otel.Tracer>
  readonly accessLog: AccessLog
}

const parentContextOf = (request: IncomingMessage): Otel.Context => {
  const parent = HttpTraceContext.fromHeaders(Headers.fromInput(request.headers as Record<string, string | ReadonlyArray<string> | undefined>))
  if (Option.isNone(parent)) return Otel.ROOT_CONTEXT
  return Otel.trace.setSpanContext(Otel.ROOT_CONTEXT, {
    traceId: parent.value.traceId,
    spanId: parent.value.spanId,
    traceFlags: parent.value.sampled ? Otel.TraceFlags.SAMPLED : Otel.TraceFlags.NONE,
    isRemote: true
  })
}

/**
 * What each connection had sent when its last answer was logged. An answer's size is what its
 * connection sent since then, head and body (one answer at a time per connection). Node counts a
 * socket's bytes by copying its write queue, so the count is read once per answer.
 */
const sentBefore = new WeakMap<object, number>()
const bytesOfAnswer = (socket: Socket) => {
  const sent = socket.bytesWritten
  const bytes = sent - (sentBefore.get(socket) ?? 0)
  sentBefore.set(socket, sent)
  return bytes
}

/** Puts `next` behind the observation of the listener of `options.environment`. */
export const makeObserver = (options: ObserverOptions) => {
  const tracer = Option.getOrUndefined(options.tracer)
  const { accessLog, environment, routeOf } = options
  const labelsOf = labelSets("environment", "method", "route", "status")

  return (next: NodeHandler): NodeHandler => (request, response) => {
    const started = performance.now()
    const method = request.method ?? "GET"
    const route = routeOf(request.url ?? "/")
    const span = tracer?.startSpan(`${method} ${route}`, {
      kind: Otel.SpanKind.SERVER,
      attributes: { "http.request.method": method, "http.route": route, "vda.environment": environment }
    }, parentContextOf(request))
    const observed: Observed = { requestId: undefined, accountId: undefined, span }
    const observable: IncomingMessage & Observable = request
    observable[OBSERVED] = observed
    const socket = request.socket

    response.on("close", () => {
      const status = response.writableFinished ? response.statusCode : CLIENT_CLOSED
      const seconds = (performance.now() - started) / 1000
      const tags = labelsOf(environment, method, route, status)
      updateUnsafe(requests, 1, tags)
      updateUnsafe(durations, seconds, tags)
      const requestId = observed.requestId
      if (span !== undefined) {
        span.setAttribute("http.response.status_code", status)
        if (observed.accountId !== undefined) span.setAttribute("vda.account_id", observed.accountId)
        if (requestId !== undefined) span.setAttribute("vda.request_id", requestId)
        if (status >= 500) span.setStatus({ code: Otel.SpanStatusCode.ERROR })
        span.end()
      }
      if (accessLog.enabled) {
        accessLog.write({
          method,
          route,
          status,
          durationMs: Math.round(seconds * 10_000) / 10,
          bytes: bytesOfAnswer(socket),
          environment,
          requestId,
          accountId: observed.accountId,
          traceId: span?.spanContext().traceId
        })
      }
    })
    next(request, response)
  }
}
