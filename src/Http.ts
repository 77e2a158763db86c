/**
 * The HTTP application: handlers, docs, and the request pipeline every request goes through:
 *
 *   request id → API key (401) → requests per minute (429) → route, decode (400) → handler
 *
 * The pipeline wraps the router, so authentication and the per-minute count happen before the
 * path, query and body are decoded, and every failure (decode errors, malformed JSON, unknown
 * routes, database outages, defects) leaves in the one error body of the contract.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { ByteSize, Cause, Clock, Context, Effect, type Exit, Layer, Logger, Option, Random, References, Result, Tracer, type Types } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiError, type HttpApiGroup, HttpApiScalar } from "effect/http-api"
import { SqlError } from "effect/sql"
import { AccountsForMeteringLive } from "./accounts/ForMetering.js"
import { AccountsHttpLive } from "./accounts/Http.js"
import { ActivitiesLive } from "./ActivitiesLive.js"
import { ConsoleApp } from "./console/Http.js"
import { ConsoleRetentionLive } from "./console/Retention.js"
import { AccountsRepo } from "./accounts/Repo.js"
import { AccountStatus } from "./accounts/Status.js"
import type { Principal } from "./principal/Domain.js"
import { AdmittedPrincipal, API_KEY_HEADER } from "./principal/Security.js"
import { Api } from "./Api.js"
import { readBodyText } from "./platform/http/RequestBody.js"
import { MeteringHttpLive } from "./metering/Http.js"
import type { ApiVersion } from "./metering/Meters.js"
import { Admission, type Admitted, type AdmittedAndCharged, type PendingAdmission, rateLimitHeaders, RequestAdmission } from "./metering/Admission.js"
import type { LimitReached } from "./metering/Metering.js"
import { type InvalidKey, keyHashOnConnection } from "./principal/Authentication.js"
import { UsageReader } from "./metering/UsageReader.js"
import { Catalog } from "./catalog/Catalog.js"
import { V1HttpLive } from "./v1/Http.js"
import type { VehicleQueryParams } from "./vehicles/Api.js"
import { VehicleRequests, VehiclesHttpLive } from "./vehicles/Http.js"
import { VehicleStore } from "./vehicles/Store.js"
import { ModuleRegistry } from "./modules/Registry.js"
import { OperationsHttpLive } from "./operations/Http.js"
import { InlineEngineLive } from "./operations/InlineEngine.js"
import { Operations } from "./operations/Operations.js"
import { TemporalEngineLive } from "./operations/TemporalEngine.js"
import { VehicleSearchesLive } from "./operations/VehicleSearches.js"
import { Leases } from "./platform/db/Leases.js"
import { AppConfig } from "./platform/config/Config.js"
import { isUnavailable } from "./platform/db/Database.js"
import * as Errors from "./platform/http/Errors.js"
import { HealthHttpLive } from "./HealthHttp.js"
import { noteAccount, noteRequestId, withRequestSpan } from "./platform/observability/HttpObservation.js"
import { ulidAt } from "./platform/ids/Ids.js"
import { describeIssues } from "./platform/decoding/SchemaIssues.js"
import { WebhooksHttpLive } from "./webhooks/Http.js"
import { DeliveryBacklogLive } from "./webhooks/Metrics.js"
import { DeliveriesRetentionLive } from "./webhooks/Retention.js"
import { MeteringRetentionLive } from "./metering/Retention.js"
import { SystemResolverLive } from "./webhooks/UrlPolicy.js"
import { Webhooks } from "./webhooks/Webhooks.js"
import { CurrentEnvironment, CurrentRequest, type Environment, saneRequestId, type ServedRequest } from "./platform/http/RequestContext.js"
import * as RequestInput from "./platform/http/RequestInput.js"
import { withHeaders } from "./platform/http/ResponseHeaders.js"

/** The API version a URL addresses: its first segment, `/v1` or `/v2` (read without a regex: every request asks). */
const versionOf = (url: string): ApiVersion | undefined => {
  const version = url.startsWith("/v1") ? "v1" : url.startsWith("/v2") ? "v2" : undefined
  const next = url[3]
  return version !== undefined && (next === undefined || next === "/" || next === "?") ? version : undefined
}

const describeDecodeError = (error: HttpApiError.HttpApiSchemaError) =>
  `Invalid request: ${describeIssues(error.cause.issue) || error.message}`

const isApiError = (u: unknown): u is Errors.ApiError =>
  u instanceof Errors.BadRequest || u instanceof Errors.Unauthorized || u instanceof Errors.Forbidden ||
  u instanceof Errors.NotFound || u instanceof Errors.TooManyRequests || u instanceof Errors.InternalError ||
  u instanceof Errors.Unavailable

const MALFORMED_BODY = "Malformed request body: expected JSON of at most 64 KiB"

/**
 * Whether a payload the router could not decode was not JSON at all (the router reports it as a
 * decode failure like any other): the body it read, read again from the request's cache.
 */
const isMalformedJson = (request: HttpServerRequest.HttpServerRequest) =>
  request.text.pipe(
    Effect.map((text) => {
      try {
        JSON.parse(text)
        return false
      } catch {
        return text !== ""
      }
    }),
    Effect.orElseSucceed(() => false)
  )

/** Turns whatever escaped the router into our error body; never leaks internals. */
const classifyFailure = (
  request: HttpServerRequest.HttpServerRequest,
  cause: Cause.Cause<unknown>
): Effect.Effect<never, Errors.ApiError> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Option.getOrElse(Cause.findErrorOption(cause), () => Cause.squash(cause))
  if (isApiError(failure)) return Effect.fail(failure)
  if (HttpApiError.HttpApiSchemaError.is(failure)) {
    const described = Errors.invalidRequest(describeDecodeError(failure))
    return failure.kind === "Payload"
      ? Effect.flatMap(isMalformedJson(request), (malformed) => malformed ? Errors.invalidRequest(MALFORMED_BODY) : described)
      : described
  }
  if (HttpServerError.isHttpServerError(failure)) {
    if (failure.reason._tag === "RouteNotFound") return Errors.routeNotFound(request.method, request.url.split("?")[0] ?? request.url)
    if (failure.reason._tag === "RequestParseError") return Errors.invalidRequest(MALFORMED_BODY)
  }
  if (SqlError.isSqlError(failure) && isUnavailable(failure)) {
    return Effect.andThen(
      Effect.logWarning("database unavailable", failure.message),
      Errors.temporarilyUnavailable("The service is temporarily unavailable; retry shortly")
    )
  }
  return Effect.andThen(Effect.logError("unhandled failure", Cause.pretty(cause)), Errors.internalError)
}


/** A route the API serves, and what the request pipeline does for its requests. */
interface ServedRoute extends RequestInput.RouteTemplate {
  /** Its endpoint, as `group.endpoint`. */
  readonly name: string
  readonly takesBody: boolean
  /** Its handler admits its requests (ADMITTED_BY_HANDLER). */
  readonly admittedByHandler: boolean
  /** Its handler may read while its request is admitted (READ_WHILE_ADMITTED). */
  readonly readWhileAdmitted: boolean
  /** Its answer to a request the pipeline answers itself (`answeredDirectly`), given its path; else undefined. */
  readonly answerDirectly?: (path: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, Errors.ApiError, HttpServerRequest.HttpServerRequest> | undefined
}

/** Every route `api` serves: its endpoints', and the documentation's. */
const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const documentation = { takesBody: false, admittedByHandler: false, readWhileAdmitted: false }
  const routes: Array<ServedRoute> = [
    { name: "openapi", method: "GET", path: "/openapi.json", ...documentation },
    { name: "docs", method: "GET", path: "/docs", ...documentation }
  ]
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      const name = `${group.identifier}.${endpoint.identifier}`
      routes.push({
        name,
        method: endpoint.method,
        path: endpoint.path,
        takesBody: endpoint.payload.size > 0,
        admittedByHandler: ADMITTED_BY_HANDLER.has(name),
        readWhileAdmitted: READ_WHILE_ADMITTED.has(name)
      })
    }
  })
  return routes
}

/**
 * The endpoints whose handlers admit their requests (`RequestAdmission`), by group and name: the
 * metered vehicle query charges its answer with its admission, in one round trip.
 */
const ADMITTED_BY_HANDLER = new Set(["vehicles.getVehicle"])

/**
 * The endpoints whose handlers only read what the caller owns (polls): for a key whose account is
 * known here, the handler reads as that account while the request is admitted, rather than after;
 * its answer is kept only once the request is admitted, and a refusal still wins.
 */
const READ_WHILE_ADMITTED = new Set(["operations.getOperation", "v1.v1GetModulesOperation", "v1.v1GetReport"])

/** A handler the pipeline calls itself (`answeredDirectly`), given the request's path parameters. */
type DirectHandler = (params: Record<string, string>) => Effect.Effect<HttpServerResponse.HttpServerResponse, Errors.ApiError, HttpServerRequest.HttpServerRequest>

/** A vehicle query with no query string: none of its parameters given (as HttpApi decodes an empty query). */
const NO_VEHICLE_QUERY_PARAMS: VehicleQueryParams = {}

/**
 * The endpoints whose requests the pipeline answers itself, by group and name, when the router
 * would have nothing to decode: no query string, no body, and path parameters of ASCII letters and
 * digits. The handler is the endpoint's own, so the answer is the same as the routed one; what is
 * skipped, the router's match and HttpApi's decoding, was a tenth of the busiest request's CPU. Any
 * other request of theirs is routed.
 */
const answeredDirectly = (vehicles: VehicleRequests["Service"]): ReadonlyMap<string, DirectHandler> =>
  new Map([["vehicles.getVehicle", (params) => vehicles.handle(params.plate!, NO_VEHICLE_QUERY_PARAMS)]])

/** `route`, answered directly by `handler` when its path's parameters allow it (`answeredDirectly`). */
const withDirectAnswer = (route: ServedRoute, handler: DirectHandler | undefined): ServedRoute => {
  if (handler === undefined) return route
  const paramsOf = RequestInput.makeAlphanumericParams(route.path)
  return {
    ...route,
    answerDirectly: (path) => {
      const params = paramsOf(path)
      return params === undefined ? undefined : handler(params)
    }
  }
}

/** The route template of a request URL, for metrics, traces and the access log. */
export const routeOfUrl = RequestInput.makeRouteResolver(routesOf(Api))

/** Services a request adds to its context, in one step. */
type ContextAddition = <X>(current: Context.Context<X>) => Context.Context<X>

const withAddition = <A, E, R>(self: Effect.Effect<A, E, R>, addition: ContextAddition): Effect.Effect<A, E, R> =>
  Effect.updateContext(self, (current: Context.Context<R>) => addition(current))

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

/** The input layer's refusal of what the URL and its path's routes say (RequestInput), before anything is read. */
const refusalOf = (request: HttpServerRequest.HttpServerRequest, path: string, routes: RequestInput.PathRoutes<ServedRoute> | undefined) =>
  RequestInput.checkUrl(request.url) ?? RequestInput.checkMethods(routes?.methods ?? [], request.method, path)

/**
 * The input layer's checks of a body: its type, its size and its JSON, read once (the router's
 * decoding reuses the text); past the limit (a chunked body), a 413. Then `next`.
 */
const checkBody = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  limits: RequestInput.BodyLimits,
  next: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => {
  const headers = RequestInput.checkBodyHeaders(RequestInput.headersOf(request), limits)
  if (headers !== undefined) return refuse(request, headers)
  return Effect.flatMap(readBodyText(request, limits.maxBytes), (text): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Errors.ApiError, R> => {
    if (Option.isNone(text)) return refuse(request, RequestInput.tooLarge(limits))
    const json = RequestInput.checkJsonText(text.value, limits)
    return json !== undefined ? refuse(request, json) : next
  })
}

/**
 * The request pipeline of `api`'s router: authenticates and counts every /v1 and /v2 request, then
 * checks its input (RequestInput) before it is routed; answers every failure in the contract's
 * body (v1's in its envelope). Every request passes here, so it runs as few steps as it can: the
 * checks that need no effect are plain calls, and the headers the request gathers (its id, its
 * rate limit) are set on its response once, at the end. What the request adds to its context is
 * set on its fiber, not restored: the pipeline must be the whole program of a request's fiber.
 */
export const makeRequestPipeline = Effect.fnUntraced(function*<Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) {
  const admission = yield* Admission
  const { requestBody } = yield* AppConfig
  const direct = answeredDirectly(yield* VehicleRequests)
  const routesAt = RequestInput.makePathIndex(routesOf(api).map((route) => withDirectAnswer(route, direct.get(route.name))))

  /** An admission as the contract answers it; its headers gathered, its account noted. */
  const answered = <A extends { readonly admitted: Admitted }>(
    request: HttpServerRequest.HttpServerRequest,
    headers: Record<string, string>,
    admission: Effect.Effect<A, InvalidKey | LimitReached>
  ) =>
    admission.pipe(
      Effect.map((answer) => {
        rateLimitHeaders(answer.admitted, headers)
        noteAccount(request.source, answer.admitted.principal.accountId)
        return answer
      }),
      Effect.catchTags({
        InvalidKey: (invalid) => Errors.invalidApiKey(invalid.explanation),
        LimitReached: Errors.limitReached
      })
    )

  /** The principal an admission admitted, as the contract answers it (`answered`). */
  const admittedPrincipal = (
    request: HttpServerRequest.HttpServerRequest,
    headers: Record<string, string>,
    admitted: Effect.Effect<AdmittedAndCharged, InvalidKey | LimitReached>
  ) => Effect.map(answered(request, headers, admitted), (answer) => answer.admitted.principal)

  /** The request admitted by the pipeline; `keyHash` is its key's, or why its key is none. */
  const admit = (
    request: HttpServerRequest.HttpServerRequest,
    environment: Environment,
    headers: Record<string, string>,
    keyHash: Result.Result<string, InvalidKey>
  ) => admittedPrincipal(request, headers, Effect.flatMap(Effect.fromResult(keyHash), (hash) => admission.admitCharging(hash, environment)))

  /**
   * The admission left to the request's handler, when its endpoint admits its requests and its
   * key's account is known here (otherwise the pipeline admits it first, as any request).
   */
  const pendingAdmission = (
    request: HttpServerRequest.HttpServerRequest,
    route: ServedRoute | undefined,
    environment: Environment,
    headers: Record<string, string>,
    keyHash: Result.Result<string, InvalidKey>
  ): PendingAdmission | undefined => {
    if (Result.isFailure(keyHash) || route?.admittedByHandler !== true) return undefined
    const expected = admission.expected(keyHash.success, environment)
    if (expected === undefined) return undefined
    let answer: Exit.Exit<AdmittedAndCharged, Errors.ApiError> | undefined
    // `admitted` is a field, not a getter: with a getter here, creating this object (even unused)
    // kept each request alive until a full collection (measured with V8's GC profiler; why, not
    // established: such a literal is a dictionary-mode object)
    const pending: Types.Mutable<PendingAdmission> = {
      expected,
      admitted: false,
      admit: (prepared) =>
        Effect.suspend(() =>
          answer ?? Effect.onExit(
            answered(request, headers, admission.admitCharging(keyHash.success, environment, prepared)),
            (exit) =>
              Effect.sync(() => {
                answer = exit
                pending.admitted = true
              })
          )
        )
    }
    return pending
  }

  /** The account a request of a read-while-admitted endpoint reads as: its key's, when known here. */
  const readerOf = (
    route: ServedRoute | undefined,
    environment: Environment,
    keyHash: string
  ): Principal | undefined =>
    route?.readWhileAdmitted === true ? admission.expected(keyHash, environment)?.principal : undefined

  /**
 * `handled`, run with its pending admission (`RequestAdmission`) in its context: admitted in the end
 * whatever happened (its refusal wins).
 */
  const admittedBy = <A, E, R>(pending: PendingAdmission, handled: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.exit(handled),
      (exit): Effect.Effect<A, E | Errors.ApiError, R> => pending.admitted ? exit : Effect.andThen(pending.admit(), exit)
    )

  return <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
    /** The request past the input layer, routed or answered directly (`answeredDirectly`); a refusal is its failure. */
    const checked = (
      request: HttpServerRequest.HttpServerRequest,
      path: string,
      routes: RequestInput.PathRoutes<ServedRoute> | undefined,
      route: ServedRoute | undefined
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Errors.ApiError, R | HttpServerRequest.HttpServerRequest> => {
      const refusal = refusalOf(request, path, routes)
      if (refusal !== undefined) return refuse(request, refusal)
      const headers = RequestInput.headersOf(request)
      if (RequestInput.hasBody(headers)) return checkBody(request, requestBody, app)
      // an empty body still declares its type: one the API does not take is refused as if it had bytes
      if (headers["content-type"] !== undefined && route?.takesBody === true) {
        const declared = RequestInput.checkBodyHeaders(headers, requestBody)
        if (declared !== undefined) return refuse(request, declared)
      }
      // no query string: the path is the whole URL
      return (route?.answerDirectly !== undefined && path.length === request.url.length ? route.answerDirectly(path) : undefined) ?? app
    }
    return Effect.withFiber<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest>((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const requestHeaders = RequestInput.headersOf(request)
      const requestId = saneRequestId(requestHeaders["x-request-id"]) ??
        `req_${ulidAt(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())}`
      // headers every response of this request carries, filled in as the request advances
      const headers: Record<string, string> = { "x-request-id": requestId }
      noteRequestId(request.source, requestId)
      const version = versionOf(request.url)
      const served: ServedRequest = { requestId, accountId: undefined }
      // what the request runs with, added to its context in one step
      const withRequest: ContextAddition = (current) => Context.add(current, CurrentRequest, served) as typeof current
      let context = withRequest
      // what a request admitted for `principal` adds: the principal (and its account, in the log lines from then on)
      const asAdmitted = (principal: Principal): ContextAddition => (current) => {
        served.accountId = principal.accountId
        return Context.add(current, AdmittedPrincipal, principal) as typeof current
      }
      // the path's routes, looked up once for every step that asks
      const path = RequestInput.pathOf(request.url)
      const routes = routesAt(path)
      const route = routes?.byMethod.get(request.method)
      let routed: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R | HttpServerRequest.HttpServerRequest>
      if (version === undefined) {
        routed = checked(request, path, routes, route)
      } else {
        const environment = fiber.getRef(CurrentEnvironment)
        const keyHash = keyHashOnConnection(RequestInput.connectionOf(request), requestHeaders[API_KEY_HEADER])
        const pending = pendingAdmission(request, route, environment, headers, keyHash)
        if (pending !== undefined) {
          const admittedAsExpected = asAdmitted(pending.expected.principal)
          context = (current) =>
            Context.add(admittedAsExpected(withRequest(current)), RequestAdmission, pending) as typeof current
          routed = admittedBy(pending, checked(request, path, routes, route))
        } else {
          const hash = Result.getOrUndefined(keyHash)
          const reader = hash === undefined ? undefined : readerOf(route, environment, hash)
          routed = hash === undefined || reader === undefined
            ? Effect.flatMap(admit(request, environment, headers, keyHash), (principal) => withAddition(checked(request, path, routes, route), asAdmitted(principal)))
            // both at once, on the request's fiber: the admission is queued, the request reads
            // meanwhile, and the read's outcome waits for the admission, whose refusal wins
            : Effect.flatMap(admission.queueAdmission(hash, environment), (queued) =>
              Effect.flatMap(Effect.exit(withAddition(checked(request, path, routes, route), asAdmitted(reader))), (read) =>
                Effect.flatMap(admittedPrincipal(request, headers, queued), (principal) =>
                  principal.accountId === reader.accountId ? read : withAddition(checked(request, path, routes, route), asAdmitted(principal)))))
        }
      }
      const finish = (response: HttpServerResponse.HttpServerResponse) =>
        withHeaders(version === "v1" ? Errors.toV1Envelope(response) : response, headers)
      const responded = Effect.matchCauseEffect(routed, {
        onSuccess: (response) => Effect.succeed(finish(response)),
        onFailure: (cause) =>
          Effect.catch(
            classifyFailure(request, cause),
            (failure) => Effect.succeed(finish(version === "v1" ? Errors.v1ErrorResponse(failure) : Errors.errorResponse(failure)))
          )
      })
      // set on the request's fiber rather than restored after, as the router sets its own: the
      // handled request puts the fiber's context back once its response is sent (HttpEffect.toHandled)
      fiber.setContext(context(fiber.context))
      return withRequestSpan(request.source)(responded)
    })
  }
})

const HandlersLive = Layer.mergeAll(
  V1HttpLive,
  VehiclesHttpLive,
  OperationsHttpLive,
  WebhooksHttpLive,
  AccountsHttpLive,
  MeteringHttpLive,
  HealthHttpLive
)

/** The engine `WORKFLOW_ENGINE` selects. */
const WorkflowEngineLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    config.workflowEngine === "temporal" ? TemporalEngineLive.pipe(Layer.provide(Leases.layer)) : InlineEngineLive
  )
)

/** Periodic clean-ups (one process at a time). */
const RetentionLive = Layer.mergeAll(MeteringRetentionLive, DeliveriesRetentionLive, ConsoleRetentionLive).pipe(Layer.provide(Leases.layer))

export const ServicesLive = Layer.mergeAll(
  RetentionLive,
  Admission.layer.pipe(Layer.provide(AccountsForMeteringLive)),
  AccountStatus.layer,
  UsageReader.layer,
  AccountsRepo.layer,
  VehicleStore.layer,
  Catalog.layer,
  ModuleRegistry.layer,
  VehicleRequests.layer.pipe(Layer.provideMerge(VehicleSearchesLive), Layer.provideMerge(Operations.layer)),
  Webhooks.layer,
  DeliveryBacklogLive
).pipe(
  Layer.provideMerge(SystemResolverLive),
  Layer.provideMerge(WorkflowEngineLive),
  Layer.provideMerge(ActivitiesLive)
)

/**
 * The API's routes (with `/openapi.json` and the `/docs` page), as a router layer: each listener
 * builds its request handler from it (`toHttpEffect`), over the services of `ServicesLive`.
 */
export const ApiRoutesLive = Layer.mergeAll(
  HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }),
  HttpApiScalar.layer(Api, { path: "/docs" })
).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(NodeHttpServer.layerHttpServices)
)

/**
 * Everything the listeners (main) and in-process tests serve the applications from, on a
 * database: the services, and the console.
 */
export const HttpStackLive = ConsoleApp.layer.pipe(Layer.provideMerge(ServicesLive))

/**
 * How the router matches paths. A path parameter of any length reaches its endpoint, whose schema
 * and handler answer it as the contract says (a long plate is an invalid plate, a long operation id
 * an unknown operation); the router's default (100 characters) would make it an unknown route. The
 * URL's length is bounded before that, by the listener's header limit (HTTP_MAX_HEADER_BYTES).
 */
export const ROUTER_CONFIG = { maxParamLength: Number.MAX_SAFE_INTEGER } as const

/** The API's router, made in the caller's scope. */
const apiRouter = HttpRouter.toHttpEffect(ApiRoutesLive).pipe(Effect.provideService(HttpRouter.RouterConfig, ROUTER_CONFIG))

/** The program of the requests the request pipeline routes. */
export type ApiRouter = Effect.Success<typeof apiRouter>

/** The API's request program with its router as `routing` gives it back (tests watch what is routed). */
export const apiProgramRouting = Effect.fnUntraced(function*(routing: (router: ApiRouter) => ApiRouter) {
  const router = yield* apiRouter
  const pipeline = yield* makeRequestPipeline(Api)
  return pipeline(routing(router))
})

/**
 * The API's request program: its router behind the request pipeline, built in the caller's
 * scope. Each listener makes its request handler from it (`forListener`).
 */
export const apiProgram = apiProgramRouting((router) => router)

/**
 * What a listener's requests run with, besides the services: its environment, the body limit the
 * router's decoding reads within (the input layer has read the body already), and no tracing of
 * the router's own (requests are traced by the listener's observation, HttpObservation, under
 * their route template).
 */
export const listenerContext = (environment: Environment) =>
  Effect.map(AppConfig, (config) =>
    Context.make(CurrentEnvironment, environment).pipe(
      Context.add(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(config.requestBody.maxBytes)),
      Context.add(HttpMiddleware.TracerDisabledWhen, () => true)
    ))

/**
 * A listener's request handler, made by `makeHandler`: the listener's context goes in the context
 * the handler runs requests with, so no request pays for providing it.
 */
export const forListener = (environment: Environment) => <A, E, R>(makeHandler: Effect.Effect<A, E, R>) =>
  Effect.flatMap(listenerContext(environment), (context) => Effect.provideContext(makeHandler, context))

/** The references the process may set that a request reads: its loggers, log level, tracer and clock. */
const PROCESS_REFERENCES = [
  Logger.CurrentLoggers,
  References.MinimumLogLevel,
  References.TracerEnabled,
  Tracer.Tracer,
  Clock.Clock,
  Random.Random
] as const

/**
 * What an API request runs with, from the process's context and its listener's: the references the
 * process set, and the listener's context, nothing else. The handlers hold their services (built
 * apart: platform/http/HttpGroup.ts), and Effect's router copies a request's context more than once
 * per request: a dozen entries, not every service of the application.
 */
export const apiRequestContext = <R>(process: Context.Context<R>, listener: Context.Context<never>): Context.Context<R> =>
  Context.merge(Context.pick(...PROCESS_REFERENCES)(process), listener) as Context.Context<R>

/** `forListener` for the API: its requests run with `apiRequestContext`. */
export const forApiListener = (environment: Environment) => <A, E, R>(makeHandler: Effect.Effect<A, E, R>) =>
  Effect.flatMap(listenerContext(environment), (listener) =>
    Effect.updateContext(makeHandler, (context: Context.Context<R>) => apiRequestContext(context, listener)))
