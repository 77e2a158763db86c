/**
 * The lean lane: the hottest routes served straight from Node's request listener, in front of the
 * HttpApi application: the vehicle query (`GET /v2/vehicles/{plate}`, `GET /v1/vehicles/basic`),
 * the operation poll (`GET /v2/operations/{id}`), and the module query that reuses an active
 * operation (`POST /v2/vehicles/{plate}/modules`, answered 200; creating one is HttpApi's), and
 * the account's status (`GET /v2/status`).
 *
 * It takes only the plainest form of a request it knows well: a key, a plate, flags and an id of
 * plain characters, and no body but a small JSON one of a module query. One Effect program on the server's runtime, with the same services
 * and Schemas as the HttpApi handlers, answers it. A vehicle query of an account this process has
 * seen, answered without the source, is prepared first, then admitted and charged in one round
 * trip and commit. Everything else, and every request the lane has not counted, is passed on
 * unchanged to the HttpApi application; a request the lane admitted but will not answer itself
 * (its account changed, an operation not found, a failure) is passed on admitted, so it is never
 * counted twice.
 *
 * The contract stays defined once: answers are encoded with the endpoints' own Schemas and errors
 * with the error contract's, and a differential test holds the two paths to the same bytes.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Cause, Clock, Effect, Either, Exit, Option, Runtime, Schema } from "effect"
import { type InvalidKey, keyHashOf } from "../accounts/Authentication.js"
import { Admission, type Admitted, type AdmittedAndCharged, rateLimitHeaders } from "../metering/Admission.js"
import type { LimitReached } from "../metering/Metering.js"
import type { ApiVersion } from "../metering/Meters.js"
import * as Errors from "../platform/Errors.js"
import { ulidAt } from "../platform/Ids.js"
import { type Environment, RequestId, saneRequestId } from "../platform/RequestContext.js"
import { handOverBody, readSmallBody } from "../platform/RequestBody.js"
import { type BodyLimits, hasBody, isJsonMediaType, parseJsonText } from "../platform/RequestInput.js"
import { AppConfig } from "../platform/Config.js"
import { hasRequestSpan, type NodeHandler, noteAccount, noteRequestId, withRequestSpan } from "../platform/HttpObservation.js"
import { StatusResponse } from "../accounts/Api.js"
import { AccountStatus } from "../accounts/Status.js"
import { V1BasicVehicle } from "../v1/Api.js"
import { VehicleQueryParams, VehicleResponse } from "../vehicles/Api.js"
import { VehicleQuery } from "../vehicles/VehicleQuery.js"
import { ModulesOperation, ModulesRequest, Operation } from "../operations/Api.js"
import { pollHeadersOf } from "../operations/Http.js"
import { Operations } from "../operations/Operations.js"

type Route =
  | { readonly _tag: "Vehicle"; readonly version: ApiVersion; readonly plate: string; readonly params: VehicleQueryParams }
  | { readonly _tag: "Operation"; readonly id: string }
  | { readonly _tag: "Modules"; readonly plate: string }
  | { readonly _tag: "Status" }

interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** What the lane did with a request it took: answered it, or left it (admitted or not) to HttpApi. */
type Outcome =
  | { readonly _tag: "Answer"; readonly answer: Answer }
  | { readonly _tag: "PassOn"; readonly admitted?: Admitted }

const PASS_ON: Outcome = { _tag: "PassOn" }

const V2_VEHICLES = "/v2/vehicles/"
const V1_BASIC = "/v1/vehicles/basic"
const V2_OPERATIONS = "/v2/operations/"
const V2_STATUS = "/v2/status"
const STATUS: Route = { _tag: "Status" }
const PLAIN_SEGMENT = /^[A-Za-z0-9]{1,32}$/
const PLAIN_ID = /^[A-Za-z0-9_]{1,64}$/
const PLAIN_QUERY = /^[A-Za-z0-9_=&.-]*$/
const MODULES_SUFFIX = "/modules"
/** The largest module query body the lane reads itself: four modules take under 60 bytes. */
const SMALL_BODY = /^[1-9][0-9]{0,2}$/

const decodeV2Params = Schema.decodeUnknownEither(VehicleQueryParams)
const encodeV2 = Schema.encodeSync(VehicleResponse)
const encodeV1 = Schema.encodeSync(V1BasicVehicle)
const encodeOperation = Schema.encodeSync(Operation)
const encodeModulesOperation = Schema.encodeSync(ModulesOperation)
const decodeModulesRequest = Schema.decodeUnknownEither(ModulesRequest)
const encodeStatus = Schema.encodeSync(StatusResponse)

/** The modules a module query's body asks for, when it is the plainest valid one (else HttpApi judges it). */
const requestedModules = (body: string, limits: BodyLimits): ReadonlyArray<string> | undefined => {
  if (Buffer.byteLength(body) > limits.maxBytes) return undefined
  const parsed = parseJsonText(body, limits)
  if ("refusal" in parsed) return undefined
  const decoded = decodeModulesRequest(parsed.value)
  return Either.isRight(decoded) ? decoded.right.modules : undefined
}

/** A module query with a small JSON body of known length, its plate plain. */
const modulesRouteOf = (request: IncomingMessage, url: string): Route | undefined => {
  const { headers } = request
  if (headers["transfer-encoding"] !== undefined || !isJsonMediaType(headers["content-type"])) return undefined
  if (typeof headers["content-length"] !== "string" || !SMALL_BODY.test(headers["content-length"])) return undefined
  if (!url.startsWith(V2_VEHICLES) || !url.endsWith(MODULES_SUFFIX)) return undefined
  const plate = url.slice(V2_VEHICLES.length, url.length - MODULES_SUFFIX.length)
  return PLAIN_SEGMENT.test(plate) ? { _tag: "Modules", plate } : undefined
}

/** The query string's parameters, unless a name repeats. */
const paramsOf = (search: string): Record<string, string> | undefined => {
  const params: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(search)) {
    if (Object.hasOwn(params, name)) return undefined
    params[name] = value
  }
  return params
}

/** Which of the lane's routes this request is (vehicle query, poll, module query, status), in the plainest form only. */
export const routeOf = (request: IncomingMessage): Route | undefined => {
  const url = request.url ?? ""
  if (request.method === "POST") return modulesRouteOf(request, url)
  if (request.method !== "GET" || hasBody(request.headers)) return undefined
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
  if (url === V2_STATUS) return STATUS
  if (path.startsWith(V2_OPERATIONS)) {
    const id = path.slice(V2_OPERATIONS.length)
    return mark === -1 && PLAIN_ID.test(id) ? { _tag: "Operation", id } : undefined
  }
  const search = mark === -1 ? "" : url.slice(mark + 1)
  if (!PLAIN_QUERY.test(search)) return undefined
  const params = paramsOf(search)
  if (params === undefined) return undefined
  if (path.startsWith(V2_VEHICLES)) {
    const plate = path.slice(V2_VEHICLES.length)
    if (!PLAIN_SEGMENT.test(plate)) return undefined
    const decoded = decodeV2Params(params)
    return Either.isRight(decoded) ? { _tag: "Vehicle", version: "v2", plate, params: decoded.right } : undefined
  }
  if (path === V1_BASIC && params.plate !== undefined && PLAIN_SEGMENT.test(params.plate)) {
    return { _tag: "Vehicle", version: "v1", plate: params.plate, params: {} }
  }
  return undefined
}

/**
 * A body encoder that encodes each answer object once: the services give the same object again
 * for the same state (a stored vehicle; an operation as one batched read found it).
 */
const encodedOnce = <A extends object>(encode: (value: A) => unknown) => {
  const bodies = new WeakMap<A, string>()
  return (value: A) => {
    let body = bodies.get(value)
    if (body === undefined) bodies.set(value, body = JSON.stringify(encode(value)))
    return body
  }
}

const vehicleBody = { v1: encodedOnce(encodeV1), v2: encodedOnce(encodeV2) }
const operationBody = encodedOnce(encodeOperation)
const modulesOperationBody = encodedOnce(encodeModulesOperation)
const statusBody = encodedOnce((data: typeof StatusResponse.Type["data"]) => encodeStatus({ success: true, data }))

const answer = (status: number, headers: Record<string, string>, body: string): Outcome => ({
  _tag: "Answer",
  answer: {
    status,
    headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers },
    body
  }
})

/** An error as the request pipeline answers it: the contract's body, `Retry-After` where it applies. */
const refusal = (failure: Errors.ApiError, version: ApiVersion, headers: Record<string, string>): Outcome => {
  const retryAfter = Errors.retryAfterOf(failure)
  return answer(
    Errors.STATUS[failure._tag],
    retryAfter === undefined ? headers : { ...headers, "retry-after": retryAfter },
    JSON.stringify(Errors.errorBodyOf(failure, version))
  )
}

const headerOf = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

const write = (response: ServerResponse, { body, headers, status }: Answer) => {
  response.writeHead(status, headers)
  response.end(body)
}

export class Lane extends Effect.Service<Lane>()("vda/Lane", {
  effect: Effect.gen(function*() {
    const admission = yield* Admission
    const query = yield* VehicleQuery
    const operations = yield* Operations
    const status = yield* AccountStatus
    // the input layer's limits, as HttpApi applies them
    const { requestBody } = yield* AppConfig

    // the request id reaches errors through the context; the answers that succeed do without it
    const tooMany = (details: Errors.ErrorDetails, requestId: string) =>
      Effect.flip(Errors.limitReached(details)).pipe(
        Effect.provideService(RequestId, requestId)
      )

    /** After the request is charged nothing may pass it on (it would be counted again): a failure is a 500. */
    const answerCharged = (version: ApiVersion, requestId: string, headers: Record<string, string>, answer: Effect.Effect<Outcome>) =>
      Effect.catchAllDefect(answer, () =>
        Effect.map(Effect.flip(Errors.internalError), (failure) => refusal(failure, version, headers)).pipe(
          Effect.provideService(RequestId, requestId)
        ))

    /** What a vehicle query's settled admission and charge answer: at once, or by an effect (a refusal, a failure). */
    const settledVehicle = (
      settled: Exit.Exit<AdmittedAndCharged, InvalidKey | LimitReached>,
      version: ApiVersion,
      requestId: string,
      response: VehicleResponse,
      source: IncomingMessage
    ): Outcome | Effect.Effect<Outcome> => {
      const headers: Record<string, string> = { "x-request-id": requestId }
      if (Exit.isFailure(settled)) {
        // a failed round trip committed nothing: HttpApi may try again
        const refused = Cause.failureOption(settled.cause)
        return Option.isSome(refused) ? refusedAdmission(refused.value, version, requestId, headers) : PASS_ON
      }
      const { admitted, charged, refused } = settled.value
      noteAccount(source, admitted.principal.accountId)
      if (!charged) return { _tag: "PassOn", admitted }
      rateLimitHeaders(admitted, headers)
      if (refused !== undefined) {
        return answerCharged(version, requestId, headers, Effect.map(tooMany(refused, requestId), (failure) => refusal(failure, version, headers)))
      }
      try {
        return answer(200, headers, vehicleBody[version](response))
      } catch (error) {
        return answerCharged(version, requestId, headers, Effect.die(error))
      }
    }

    /** The vehicle query, charged with its admission in one round trip. */
    const serveVehicle = (
      environment: Environment,
      route: Route & { _tag: "Vehicle" },
      keyHash: string,
      requestId: string,
      source: IncomingMessage
    ): Effect.Effect<Outcome> => {
      const expected = admission.knownAccount(keyHash)
      if (expected === undefined || expected.principal.environment !== environment) return Effect.succeed(PASS_ON)
      // refusals of the query itself are left to HttpApi, which admits first, as the contract orders
      return Effect.matchEffect(query.prepare(expected.principal, route.plate, route.params, route.version, requestId), {
        onFailure: () => Effect.succeed(PASS_ON),
        onSuccess: Option.match({
          onNone: () => Effect.succeed(PASS_ON),
          onSome: ({ consumption, response }) =>
            Effect.flatMap(Effect.exit(admission.admitAndCharge(keyHash, environment, { expected, consumption })), (settled) => {
              const outcome = settledVehicle(settled, route.version, requestId, response, source)
              return Effect.isEffect(outcome) ? outcome : Effect.succeed(outcome)
            })
        })
      })
    }

    /** A refused admission: a limit's 429 is answered; an unknown key counted nothing, and HttpApi answers it. */
    const refusedAdmission = (
      refused: InvalidKey | LimitReached,
      version: ApiVersion,
      requestId: string,
      headers: Record<string, string>
    ) =>
      refused._tag === "InvalidKey"
        ? Effect.succeed(PASS_ON)
        : Effect.map(tooMany(refused, requestId), (failure) => refusal(failure, version, headers))

    /** Admits a request, then serves it. */
    const admitThen = (
      environment: Environment,
      keyHash: string,
      requestId: string,
      source: IncomingMessage,
      serveAdmitted: (admitted: Admitted, headers: Record<string, string>) => Effect.Effect<Outcome>
    ) => {
      const headers: Record<string, string> = { "x-request-id": requestId }
      return Effect.matchEffect(admission.admitKeyHash(keyHash, environment), {
        onFailure: (refused) => refusedAdmission(refused, "v2", requestId, headers),
        onSuccess: (admitted) => {
          noteAccount(source, admitted.principal.accountId)
          return serveAdmitted(admitted, headers)
        }
      })
    }

    /** Anything but what the lane reads for an admitted request (a failure, a defect) is left to HttpApi, admitted. */
    const orPassOn = (admitted: Admitted, read: Effect.Effect<Outcome, unknown>): Effect.Effect<Outcome> =>
      Effect.catchAllCause(read, () => Effect.succeed<Outcome>({ _tag: "PassOn", admitted }))

    /** An operation poll: admitted, then read. */
    const serveOperation = (environment: Environment, id: string, keyHash: string, requestId: string, source: IncomingMessage) =>
      admitThen(environment, keyHash, requestId, source, (admitted, headers) =>
        orPassOn(
          admitted,
          Effect.map(operations.get(admitted.principal, id), (operation) =>
            answer(200, { ...rateLimitHeaders(admitted, headers), ...pollHeadersOf(operation.status) }, operationBody(operation)))
        ))

    /** A module query that reuses the active identical operation: admitted, then answered 200 (nothing charged). */
    const serveModules = (
      environment: Environment,
      plate: string,
      body: string,
      keyHash: string,
      requestId: string,
      source: IncomingMessage
    ) => {
      const modules = requestedModules(body, requestBody)
      if (modules === undefined) return Effect.succeed(PASS_ON)
      return admitThen(environment, keyHash, requestId, source, (admitted, headers) =>
        orPassOn(
          admitted,
          Effect.map(operations.reusable(admitted.principal, plate, modules), Option.match({
            // creating the operation is HttpApi's
            onNone: (): Outcome => ({ _tag: "PassOn", admitted }),
            onSome: (running) => answer(200, rateLimitHeaders(admitted, headers), modulesOperationBody(running))
          }))
        ))
    }

    /** The account's status: admitted, then read. */
    const serveStatus = (environment: Environment, keyHash: string, requestId: string, source: IncomingMessage) =>
      admitThen(environment, keyHash, requestId, source, (admitted, headers) =>
        orPassOn(
          admitted,
          Effect.map(status.read(admitted.principal), (data) =>
            answer(200, rateLimitHeaders(admitted, headers), statusBody(data)))
        ))

    const serve = (
      environment: Environment,
      route: Route,
      body: string | undefined,
      keyHash: string,
      requestId: string,
      source: IncomingMessage
    ) => {
      noteRequestId(source, requestId)
      switch (route._tag) {
        case "Vehicle":
          return serveVehicle(environment, route, keyHash, requestId, source)
        case "Operation":
          return serveOperation(environment, route.id, keyHash, requestId, source)
        case "Modules":
          return serveModules(environment, route.plate, body ?? "", keyHash, requestId, source)
        case "Status":
          return serveStatus(environment, keyHash, requestId, source)
      }
    }

    const requestIdAt = (header: string | undefined, now: number) => saneRequestId(header) ?? `req_${ulidAt(now)}`
    const requestIdOf = (header: string | undefined) => Effect.map(Clock.currentTimeMillis, (now) => requestIdAt(header, now))

    return {
      /** `next` behind the lane, for the listener of `environment`. */
      front: (environment: Environment, next: NodeHandler) =>
        Effect.map(Effect.zip(Effect.runtime<never>(), Effect.clock), ([runtime, clock]): NodeHandler => {
          const run = Runtime.runCallback(runtime)
          const finish = (request: IncomingMessage, response: ServerResponse, outcome: Outcome, body?: string) => {
            if (outcome._tag === "Answer") return write(response, outcome.answer)
            if (outcome.admitted !== undefined) admission.handOver(request, outcome.admitted)
            if (body !== undefined) handOverBody(request, body)
            next(request, response)
          }
          const take = (request: IncomingMessage, response: ServerResponse, route: Route, keyHash: string, body?: string) => {
            const served = Effect.flatMap(requestIdOf(headerOf(request, "x-request-id")), (requestId) =>
              serve(environment, route, body, keyHash, requestId, request)).pipe(withRequestSpan(request))
            run(served, { onExit: (exit) => finish(request, response, Exit.isSuccess(exit) ? exit.value : PASS_ON, body) })
          }
          /**
           * The busy account's vehicle query with nothing to wait for but its admission (a known
           * account, a plain answer built already, no trace to continue): no fiber of its own, it
           * waits in the admission batch as a callback. False when it needs the program above.
           */
          const vehicleAtOnce = (request: IncomingMessage, response: ServerResponse, route: Route & { _tag: "Vehicle" }, keyHash: string) => {
            if (hasRequestSpan(request)) return false
            const expected = admission.knownAccount(keyHash)
            if (expected === undefined || expected.principal.environment !== environment) return false
            const at = clock.unsafeCurrentTimeMillis()
            const prepared = query.prepareAtOnce(expected.principal, route.plate, route.params, route.version, at)
            if (prepared === undefined) return false
            const requestId = requestIdAt(headerOf(request, "x-request-id"), at)
            noteRequestId(request, requestId)
            admission.offerAdmitAndCharge(
              { keyHash, environment, at, prepared: { expected, consumption: prepared.consumption } },
              (settled) => {
                const outcome = settledVehicle(settled, route.version, requestId, prepared.response, request)
                if (!Effect.isEffect(outcome)) return finish(request, response, outcome)
                run(outcome, { onExit: (exit) => finish(request, response, Exit.isSuccess(exit) ? exit.value : PASS_ON) })
              }
            )
            return true
          }
          return (request, response) => {
            const route = routeOf(request)
            const keyHash = route === undefined ? undefined : keyHashOf(headerOf(request, "x-api-key"))
            if (route === undefined || keyHash === undefined || Either.isLeft(keyHash)) return next(request, response)
            if (route._tag === "Vehicle" && vehicleAtOnce(request, response, route, keyHash.right)) return
            if (route._tag !== "Modules") return take(request, response, route, keyHash.right)
            // a request that fails while its body arrives has no one left to answer
            readSmallBody(request, (body) => body === undefined ? response.destroy() : take(request, response, route, keyHash.right, body))
          }
        })
    }
  })
}) {}
