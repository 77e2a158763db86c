/**
 * The HTTP application: handlers, docs, and the request pipeline every request goes through:
 *
 *   request id → API key (401) → requests per minute (429) → route, decode (400) → handler
 *
 * The pipeline wraps the router, so authentication and the per-minute count happen before the
 * path, query and body are decoded, and every failure (decode errors, malformed JSON, unknown
 * routes, database outages, defects) leaves in the one error body of the contract.
 */
import {
  FetchHttpClient,
  FileSystem,
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  type HttpApiGroup,
  HttpApiScalar,
  HttpApp,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Layer, Option } from "effect"
import { AccountsHttpLive } from "./accounts/Http.js"
import { ConsoleApp } from "./console/Http.js"
import { ConsoleRetentionLive } from "./console/Retention.js"
import { AccountsRepo } from "./accounts/Repo.js"
import { AccountStatus } from "./accounts/Status.js"
import { AdmittedPrincipal, ApiKeyAuthLive } from "./accounts/Security.js"
import { Api } from "./Api.js"
import { readBodyText } from "./platform/RequestBody.js"
import { MeteringHttpLive } from "./metering/Http.js"
import { Metering } from "./metering/Metering.js"
import { Admission, rateLimitHeaders } from "./metering/Admission.js"
import { UsageReader } from "./metering/UsageReader.js"
import { Catalog } from "./catalog/Catalog.js"
import { V1HttpLive } from "./v1/Http.js"
import { VehiclesHttpLive } from "./vehicles/Http.js"
import { VehicleStore } from "./vehicles/Store.js"
import { VehicleQuery } from "./vehicles/VehicleQuery.js"
import { ModuleRegistry } from "./modules/Registry.js"
import { OperationActivities } from "./operations/Activities.js"
import { OperationsHttpLive } from "./operations/Http.js"
import { InlineEngineLive } from "./operations/InlineEngine.js"
import { Operations } from "./operations/Operations.js"
import { OperationsRepo } from "./operations/Repo.js"
import { TemporalEngineLive } from "./operations/TemporalEngine.js"
import { Leases } from "./platform/Leases.js"
import { AppConfig } from "./platform/Config.js"
import { isUnavailable } from "./platform/Database.js"
import * as Errors from "./platform/Errors.js"
import { HealthHttpLive } from "./HealthHttp.js"
import { noteAccount, noteRequestId, withRequestSpan } from "./platform/HttpObservation.js"
import { ulid } from "./platform/Ids.js"
import { WebhooksHttpLive } from "./webhooks/Http.js"
import { WebhookDeliveries } from "./webhooks/Deliveries.js"
import { DeliveryBacklogLive } from "./webhooks/Metrics.js"
import { DeliveriesRetentionLive } from "./webhooks/Retention.js"
import { MeteringRetentionLive } from "./metering/Retention.js"
import { WebhooksRepo } from "./webhooks/Repo.js"
import { SystemResolverLive } from "./webhooks/UrlPolicy.js"
import { Webhooks } from "./webhooks/Webhooks.js"
import { CurrentEnvironment, type Environment, RequestId, saneRequestId } from "./platform/RequestContext.js"
import * as RequestInput from "./platform/RequestInput.js"


const setHeaders = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

const versionOf = (url: string): "v1" | "v2" | undefined => {
  const match = /^\/(v[12])(?:[/?]|$)/.exec(url)
  return match ? (match[1] as "v1" | "v2") : undefined
}

const describeDecodeError = (error: HttpApiError.HttpApiDecodeError) => {
  const issues = error.issues.slice(0, 3).map((issue) =>
    issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message
  )
  return `Invalid request: ${issues.join("; ") || error.message}`
}

const isApiError = (u: unknown): u is Errors.ApiError =>
  u instanceof Errors.BadRequest || u instanceof Errors.Unauthorized || u instanceof Errors.Forbidden ||
  u instanceof Errors.NotFound || u instanceof Errors.TooManyRequests || u instanceof Errors.InternalError ||
  u instanceof Errors.Unavailable

/** Turns whatever escaped the router into our error body; never leaks internals. */
const classifyFailure = (
  request: HttpServerRequest.HttpServerRequest,
  cause: Cause.Cause<unknown>
): Effect.Effect<never, Errors.ApiError> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (isApiError(error)) return Effect.fail(error)
    if (error instanceof HttpApiError.HttpApiDecodeError) return Errors.invalidRequest(describeDecodeError(error))
    if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
      return Errors.routeNotFound(request.method, request.url.split("?")[0] ?? request.url)
    }
  }
  const defect = Cause.squash(cause)
  if (HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode") {
    return Errors.invalidRequest("Malformed request body: expected JSON of at most 64 KiB")
  }
  if (defect instanceof SqlError && isUnavailable(defect)) {
    return Effect.zipRight(
      Effect.logWarning("database unavailable", defect.message),
      Errors.temporarilyUnavailable("The service is temporarily unavailable; retry shortly")
    )
  }
  return Effect.zipRight(Effect.logError("unhandled failure", Cause.pretty(cause)), Errors.internalError)
}

const normalizeFailure = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>) =>
  classifyFailure(request, cause).pipe(
    Effect.tapError((error) => {
      const retryAfter = Errors.retryAfterOf(error)
      return retryAfter === undefined ? Effect.void : setHeaders({ "retry-after": retryAfter })
    })
  )

/** Every route `api` serves, with the documentation's. */
const routesOf = (api: HttpApi.HttpApi.Any) => {
  const routes: Array<RequestInput.RouteTemplate> = [{ method: "GET", path: "/openapi.json" }, { method: "GET", path: "/docs" }]
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => void routes.push({ method: endpoint.method, path: endpoint.path })
  })
  return routes
}

/** The route template of a request URL, for metrics, traces and the access log. */
export const routeOfUrl = RequestInput.makeRouteResolver(routesOf(Api))

/** A refusal of the input layer, as the response (or the contract error) it becomes. */
const refuse = (request: HttpServerRequest.HttpServerRequest, refusal: RequestInput.Refusal) => {
  switch (refusal.status) {
    case 400:
      return Errors.invalidRequest(refusal.message)
    case 404:
      return Errors.routeNotFound(request.method, request.url.split("?")[0] ?? request.url)
    case 405:
      return Errors.refusalResponse(405, refusal.message, { allow: refusal.allow })
    case 413:
    case 415:
      return Errors.refusalResponse(refusal.status, refusal.message)
  }
}

/**
 * The input layer (RequestInput): the route and method, the URL's characters, and the body's
 * type, size and JSON, checked once for every route before the router decodes anything.
 */
const checkInput = (methodsOf: (path: string) => ReadonlyArray<string>, limits: RequestInput.BodyLimits) => (app: HttpApp.Default) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const refusal = RequestInput.checkUrl(request.url) ?? RequestInput.checkRoute(methodsOf, request.method, request.url)
    if (refusal !== undefined) return yield* refuse(request, refusal)
    if (RequestInput.hasBody(request.headers)) {
      const headers = RequestInput.checkBodyHeaders(request.headers, limits)
      if (headers !== undefined) return yield* refuse(request, headers)
      // read once (the router's decoding reuses it); past the limit (a chunked body), a 413
      const text = yield* readBodyText(request, limits.maxBytes)
      if (Option.isNone(text)) return yield* refuse(request, RequestInput.tooLarge(limits))
      const json = RequestInput.checkJsonText(text.value, limits)
      if (json !== undefined) return yield* refuse(request, json)
    }
    return yield* app
  })

/** Authenticates and counts every /v2 request of `api`, then checks its input, before it is routed. */
export const makeRequestPipeline = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, R>(
  api: HttpApi.HttpApi<Id, Groups, Errors.ApiError | HttpApiError.HttpApiDecodeError, R>
) =>
  HttpApiBuilder.middleware(
  api,
  Effect.gen(function*() {
    const admission = yield* Admission
    const { requestBody } = yield* AppConfig
    const checked = checkInput(RequestInput.makeRouteTable(routesOf(api)), requestBody)

    const admit = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest, headers: Record<string, string>) {
      const environment = yield* CurrentEnvironment
      const admitted = yield* admission.admit(request.headers["x-api-key"], environment).pipe(
        Effect.catchTags({
          InvalidKey: (invalid) => Errors.invalidApiKey(invalid.explanation),
          LimitReached: Errors.limitReached
        })
      )
      rateLimitHeaders(admitted, headers)
      noteAccount(request.source, admitted.principal.accountId)
      return admitted.principal
    })

    return (app: HttpApp.Default) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = saneRequestId(request.headers["x-request-id"]) ?? `req_${yield* ulid}`
        // headers every response of this request carries, filled in as the request advances
        const headers: Record<string, string> = { "x-request-id": requestId }
        noteRequestId(request.source, requestId)
        yield* setHeaders(headers)
        const version = versionOf(request.url)
        const routed = version !== undefined
          ? Effect.flatMap(admit(request, headers), (principal) =>
            checked(app).pipe(
              Effect.provideService(AdmittedPrincipal, Option.some(principal)),
              Effect.annotateLogs("accountId", principal.accountId)
            ))
          : checked(app)
        const answered = routed.pipe(Effect.catchAllCause((cause) => normalizeFailure(request, cause)))
        return yield* (version === "v1"
          ? answered.pipe(Effect.catchAll((failure) => Effect.succeed(Errors.v1ErrorResponse(failure))), Effect.map(Errors.toV1Envelope))
          : answered).pipe(
          HttpIncomingMessage.withMaxBodySize(Option.some(FileSystem.Size(requestBody.maxBytes))),
          Effect.provideService(RequestId, requestId),
          Effect.annotateLogs("requestId", requestId),
          withRequestSpan(request.source)
        )
      })
  })
)

const HandlersLive = Layer.mergeAll(
  V1HttpLive,
  VehiclesHttpLive,
  OperationsHttpLive,
  WebhooksHttpLive,
  AccountsHttpLive,
  MeteringHttpLive,
  HealthHttpLive
).pipe(
  Layer.provide(ApiKeyAuthLive)
)

/** The engine `WORKFLOW_ENGINE` selects. */
const WorkflowEngineLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    config.workflowEngine === "temporal" ? TemporalEngineLive.pipe(Layer.provide(Leases.Default)) : InlineEngineLive
  )
)

/** Everything that runs operations' activities: shared by the API (inline engine) and the worker. */
export const ActivitiesLive = OperationActivities.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(VehicleQuery.Default, WebhookDeliveries.Default)),
  Layer.provideMerge(Layer.mergeAll(OperationsRepo.Default, WebhooksRepo.Default)),
  Layer.provideMerge(Metering.Default),
  Layer.provide(FetchHttpClient.layer)
)

/** Periodic clean-ups (one process at a time). */
const RetentionLive = Layer.mergeAll(MeteringRetentionLive, DeliveriesRetentionLive, ConsoleRetentionLive).pipe(Layer.provide(Leases.Default))

export const ServicesLive = Layer.mergeAll(
  RetentionLive,
  Admission.Default,
  AccountStatus.Default,
  UsageReader.Default,
  AccountsRepo.Default,
  VehicleStore.Default,
  Catalog.Default,
  ModuleRegistry.Default,
  Operations.Default,
  Webhooks.Default,
  DeliveryBacklogLive
).pipe(
  Layer.provideMerge(SystemResolverLive),
  Layer.provideMerge(WorkflowEngineLive),
  Layer.provideMerge(ActivitiesLive)
)

/** The API with docs, pipeline and handlers; needs the services and a database. */
export const AppLive = Layer.mergeAll(
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiScalar.layer({ path: "/docs" }),
  makeRequestPipeline(Api),
  ConsoleApp.Default
).pipe(
  Layer.provideMerge(HttpApiBuilder.api(Api).pipe(Layer.provide(HandlersLive))),
  Layer.provideMerge(ServicesLive)
)

/**
 * Everything `HttpApiBuilder.httpApp` needs to produce the application, on a database. Listeners
 * (main) and in-process tests serve the same app from it.
 */
export const HttpStackLive = AppLive.pipe(
  Layer.provideMerge(Layer.mergeAll(
    HttpApiBuilder.Router.Live,
    HttpApiBuilder.Middleware.layer,
    NodeHttpServer.layerContext
  ))
)

/**
 * A listener's Node request handler, made by `makeHandler`: the environment goes in the runtime the
 * handler runs requests on, so no request pays for providing it (each provided service copies the
 * context).
 */
export const forListener = (environment: Environment) => <A, E, R>(makeHandler: Effect.Effect<A, E, R>) =>
  Effect.provideService(makeHandler, CurrentEnvironment, environment).pipe(
    // requests are traced by the listener's observation (HttpObservation), under their route template
    Effect.locally(HttpMiddleware.currentTracerDisabledWhen, () => true)
  )
