/**
 * Webhook events and their delivery attempts (the activities of the delivery workflow, and the
 * event step of the operation workflows).
 *
 * An event is recorded once: its body (the exact bytes of every attempt) is stored with its
 * delivery, whose id is the event id without `evt_`. An operation has at most one event, so a
 * retried event step never sends twice. Each attempt reads the configuration again (the current
 * URL and secret: a rotation applies to retries), signs the stored body now, and records the
 * outcome: any 2xx is `processed`; otherwise `pending` with the planned time of the next attempt,
 * until the last attempt, which leaves it `failed`.
 */
import { randomUUID } from "node:crypto"
import { Clock, Context, Effect, Layer, Option, Result, Schema, type Tracer } from "effect"
import { Headers, HttpTraceContext } from "effect/http"
import { type DeliveryStatus, FIRST_SERIES, isFinal } from "../../workflows/shared.js"
import { retryDelayMs } from "../platform/sandboxSafe/RetryPolicy.js"
import type { Operation } from "../operations/Api.js"
import { type AttemptInput, DeliveryFailed } from "../operations/DeliveryRuns.js"
import { toOperation } from "../operations/Operations.js"
import { type ModuleRow, type OperationRow, OperationsRepo } from "../operations/Repo.js"
import type { Environment } from "../platform/http/RequestContext.js"
import { type EventType, WebhookEvent } from "./Api.js"
import { isRecordedSpan } from "../platform/observability/Telemetry.js"
import { countAttempt } from "./Metrics.js"
import { type DeliveryRow, WebhooksRepo } from "./Repo.js"
import { WebhookSender } from "./Sender.js"
import { type EventOf, V1EventBodies } from "./V1EventBodies.js"
import { checkUrlSyntax } from "./UrlPolicy.js"
import { signWebhook, WEBHOOK_HEADERS } from "./verify.js"

const encodeEvent = Schema.encodeSync(WebhookEvent)

/** A v2 event's type and data, which go together. */
type EventContent = WebhookEvent extends infer Event ? Event extends WebhookEvent ? Pick<Event, "type" | "data"> : never : never

const contentOf = (operation: Operation): EventContent =>
  operation.kind === "modules"
    ? { type: operation.status === "failed" ? "modules.failed" : "modules.completed", data: operation }
    : { type: operation.status === "failed" ? "vehicle.failed" : "vehicle.completed", data: operation }

/** A v2 event: `{id, type, apiVersion, createdAt, data}`. */
const v2Event = (content: EventContent) => (eventId: string, at: Date) =>
  encodeEvent({ id: eventId, apiVersion: "v2", createdAt: at, ...content })

/** The event of a final v2 operation. */
const v2EventOf = (row: OperationRow, modules: ReadonlyArray<ModuleRow>): EventOf<EventType> => {
  const content = contentOf(toOperation(row, modules))
  return { type: content.type, body: v2Event(content) }
}

/**
 * One attempt, as the delivery's log tells it: "delivery attempt 2 failed: HTTP 503". The reason
 * of an attempt without an answer is the sender's (a connection error, a timeout), never the URL.
 */
const logAttempt = (attempt: number, responseStatus: number | null, failure: string | null) => {
  const outcome = failure === null ? "succeeded" : "failed"
  return Effect.logInfo(`delivery attempt ${attempt} ${outcome}: ${responseStatus === null ? failure : `HTTP ${responseStatus}`}`).pipe(
    Effect.annotateLogs({
      attempt,
      outcome,
      ...(responseStatus === null ? {} : { responseStatus }),
      ...(failure === null || responseStatus !== null ? {} : { error: failure })
    })
  )
}

/** A delivery's end, as its log tells it: "delivery processed", "delivery failed after 5 attempts: HTTP 503". */
const logSettled = (status: DeliveryStatus, attempts: number, why?: string) =>
  Effect.logInfo(
    status === "processed"
      ? "delivery processed"
      : `delivery failed after ${attempts} attempt${attempts === 1 ? "" : "s"}${why === undefined ? "" : `: ${why}`}`
  ).pipe(Effect.annotateLogs({ status, attempts }))

/** What a delivery's log lines carry: the delivery, its operation (a test event has none), its account, its event. */
const deliveryAnnotations = (delivery: DeliveryRow) => ({
  deliveryId: delivery.id,
  accountId: delivery.accountId,
  eventType: delivery.eventType,
  ...(delivery.operationId === null ? {} : { operationId: delivery.operationId })
})

/** The span that caused a delivery (its operation's workflow), as a link of each attempt's span. */
const causeLinkOf = (delivery: DeliveryRow): Array<Tracer.SpanLink> => {
  if (delivery.traceParent === null) return []
  const cause = HttpTraceContext.w3c(Headers.fromInput({ traceparent: delivery.traceParent }))
  return Option.isSome(cause) ? [{ span: cause.value, attributes: { "vda.link": "caused_by" } }] : []
}

const make = Effect.gen(function*() {
  const repo = yield* WebhooksRepo
  const v1 = yield* V1EventBodies
  const operations = yield* OperationsRepo
  const sender = yield* WebhookSender

  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  /** Records an event (its body built from its id and time) and its pending delivery; returns the delivery id. */
  const record = Effect.fnUntraced(function*(input: {
    readonly accountId: string
    readonly environment: Environment
    readonly apiVersion: "v1" | "v2"
    readonly type: string
    readonly operationId: string | null
    readonly sendsWhenDisabled?: boolean
    readonly body: (eventId: string, at: Date) => unknown
  }) {
    const at = yield* now
    const id = randomUUID()
    const cause = yield* Effect.option(Effect.currentSpan)
    return yield* repo.insertDelivery({
      id,
      accountId: input.accountId,
      environment: input.environment,
      apiVersion: input.apiVersion,
      eventType: input.type,
      operationId: input.operationId,
      body: JSON.stringify(input.body(`evt_${id}`, at)),
      sendsWhenDisabled: input.sendsWhenDisabled ?? false,
      createdAt: at,
      traceParent: Option.isSome(cause) && isRecordedSpan(cause.value) ? HttpTraceContext.toHeaders(cause.value).traceparent ?? null : null
    })
  })

  /**
   * The event step of an operation's workflow: when the operation is final and the webhook is
   * enabled with a URL, records its event (once) and returns the delivery to start.
   */
  const emitForOperation = Effect.fnUntraced(function*(operationId: string) {
    const row = Option.getOrUndefined(yield* operations.find(operationId))
    if (row === undefined || !isFinal(row.status)) return null
    const webhook = Option.getOrUndefined(yield* repo.findConfig(row.accountId, row.environment))
    if (webhook === undefined || !webhook.enabled || webhook.url === null) return null
    const modules = row.kind === "vehicle" ? [] : yield* operations.modules(operationId)
    return yield* record({
      accountId: row.accountId,
      environment: row.environment,
      apiVersion: row.apiVersion,
      operationId,
      ...(row.kind === "report" || row.apiVersion === "v1" ? v1.ofOperation(row, modules) : v2EventOf(row, modules))
    })
  })

  const recordTest = (accountId: string, environment: Environment) =>
    record({
      accountId,
      environment,
      apiVersion: "v2",
      type: "webhook.test",
      operationId: null,
      body: v2Event({ type: "webhook.test", data: { message: "This is a test event from the Vehicle Data API" } })
    })

  /** v1's test: a sample `report.completed`, sent even while the webhook is disabled. */
  const recordV1Test = (accountId: string, environment: Environment) =>
    record({
      accountId,
      environment,
      apiVersion: "v1",
      type: "report.completed",
      operationId: null,
      sendsWhenDisabled: true,
      body: v1.test
    })

  /**
   * Attempt number `attempt` (1-based) of a delivery, with the engine's retry `policy`; fails
   * with DeliveryFailed unless the endpoint answered 2xx.
   */
  const attempt = (input: AttemptInput) =>
    Effect.flatMap(repo.findDelivery(input.deliveryId), (found) => {
      const delivery = Option.getOrUndefined(found)
      if (delivery === undefined) return Effect.succeed<DeliveryStatus>("failed")
      // a straggler of a series the delivery was resent after: that series is over
      if (delivery.series !== (input.series ?? FIRST_SERIES)) return Effect.succeed<DeliveryStatus>("failed")
      if (delivery.status !== "pending") return Effect.succeed(delivery.status) // an attempt already settled it
      // the engine counts from 1 again when it starts the series over (a workflow its server
      // lost): the attempts already made count, so the limit holds across restarts
      const number = Math.max(input.attempt, delivery.attempts + 1)
      return attemptPending({ ...input, attempt: number }, delivery).pipe(
        Effect.tap(() => Effect.sync(() => countAttempt("delivered"))),
        Effect.tapError(() => Effect.sync(() => countAttempt("failed"))),
        Effect.withSpan("webhook.delivery.attempt", {
          kind: "client",
          attributes: {
            "vda.delivery_id": delivery.id,
            "vda.attempt": number,
            "vda.delivery_series": delivery.series,
            "vda.event_type": delivery.eventType,
            ...(delivery.operationId === null ? {} : { "vda.operation_id": delivery.operationId })
          },
          links: causeLinkOf(delivery)
        }),
        Effect.annotateLogs(deliveryAnnotations(delivery))
      )
    })

  const attemptPending = Effect.fnUntraced(function*(input: AttemptInput, delivery: DeliveryRow) {
    const at = yield* now
    const last = input.policy.maximumAttempts > 0 && input.attempt >= input.policy.maximumAttempts
    const fail = Effect.fnUntraced(function*(message: string, responseStatus: number | null, retryable: boolean) {
        const final = last || !retryable
        const recorded = yield* repo.recordAttempt(input.deliveryId, {
          series: delivery.series,
          attempts: input.attempt,
          status: final ? "failed" : "pending",
          responseStatus,
          lastError: message,
          nextAttemptAt: final ? at : new Date(at.getTime() + retryDelayMs(input.policy, input.attempt)),
          at
        })
        // the attempt was made either way; its end is told only by the attempt that ended it
        yield* logAttempt(input.attempt, responseStatus, message)
        if (recorded && final) yield* logSettled("failed", input.attempt, responseStatus === null ? message : `HTTP ${responseStatus}`)
        return yield* new DeliveryFailed({ message, retryable: retryable && !last })
        })

    const webhook = Option.getOrUndefined(yield* repo.findConfig(delivery.accountId, delivery.environment))
    if (webhook === undefined || webhook.url === null || (!webhook.enabled && !delivery.sendsWhenDisabled)) {
      return yield* fail("the webhook is disabled or has no URL", null, false)
    }
    const url = yield* checkUrlSyntax(webhook.url).pipe(Effect.result)
    if (Result.isFailure(url)) return yield* fail(url.failure.reason, null, false)
    const timestamp = String(Math.floor(at.getTime() / 1000))
    const answer = yield* sender.send({
      url: webhook.url,
      body: delivery.body,
      headers: {
        [WEBHOOK_HEADERS.signature]: signWebhook(webhook.secret, timestamp, delivery.body),
        [WEBHOOK_HEADERS.timestamp]: timestamp,
        [WEBHOOK_HEADERS.event]: `${delivery.apiVersion}.${delivery.eventType}`,
        [WEBHOOK_HEADERS.delivery]: delivery.id,
        "user-agent": "vehicle-data-api-webhooks"
      }
    })
    yield* Effect.annotateCurrentSpan("http.response.status_code", answer._tag === "NoAnswer" ? 0 : answer.status)
    if (answer._tag === "NoAnswer") return yield* fail(answer.reason, null, true)
    if (answer.status < 200 || answer.status >= 300) return yield* fail(`the endpoint answered ${answer.status}`, answer.status, true)
    const recorded = yield* repo.recordAttempt(input.deliveryId, {
      series: delivery.series,
      attempts: input.attempt,
      status: "processed",
      responseStatus: answer.status,
      lastError: null,
      nextAttemptAt: at,
      at
    })
    yield* logAttempt(input.attempt, answer.status, null)
    if (recorded) yield* logSettled("processed", input.attempt)
    return "processed" as DeliveryStatus
  })

  /**
   * Ends a delivery still pending in `series` `failed` (that series' workflow is gone, or its
   * attempts ran out); a delivery resent since is left to its new series.
   */
  const settle = Effect.fnUntraced(function*(deliveryId: string, series: number | undefined, reason: string) {
    const settled = yield* repo.settle(deliveryId, series ?? FIRST_SERIES, reason, yield* now)
    if (!settled) return false
    // rare (the attempts failed inside the activity, or its workflow is gone): read back for its log line
    const delivery = Option.getOrUndefined(yield* repo.findDelivery(deliveryId))
    yield* logSettled("failed", delivery?.attempts ?? 0, reason).pipe(
      Effect.annotateLogs(delivery === undefined ? { deliveryId } : deliveryAnnotations(delivery))
    )
    return true
  })

  return { emitForOperation, recordTest, recordV1Test, attempt, settle }
})

export class WebhookDeliveries extends Context.Service<WebhookDeliveries, Effect.Success<typeof make>>()("vda/WebhookDeliveries", { make }) {
  /** Needs a `WebhookSender`. */
  static readonly layer = Layer.effect(WebhookDeliveries, make).pipe(Layer.provide(WebhooksRepo.layer))
}
