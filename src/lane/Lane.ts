/**
 * The lean lane: the hottest routes served straight from Node's request listener, in front of the
 * HttpApi application: the vehicle query (`GET /v2/vehicles/{plate}`, `GET /v1/vehicles/basic`)
 * and the operation poll (`GET /v2/operations/{id}`).
 *
 * It takes only the plainest form of a request it knows well: a key, a plate, flags and an id of
 * plain characters, no body. One Effect program on the server's runtime, with the same services
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
import { Clock, Effect, Either, Exit, Option, Runtime, Schema } from "effect"
import { keyHashOf } from "../accounts/Authentication.js"
import { Admission, type Admitted, rateLimitHeaders } from "../metering/Admission.js"
import type { ApiVersion } from "../metering/Meters.js"
import * as Errors from "../platform/Errors.js"
import { ulidAt } from "../platform/Ids.js"
import { type Environment, RequestId, saneRequestId } from "../platform/RequestContext.js"
import { hasBody } from "../platform/RequestInput.js"
import { type NodeHandler, noteAccount, noteRequestId, withRequestSpan } from "../platform/HttpObservation.js"
import { V1BasicVehicle } from "../v1/Api.js"
import { VehicleQueryParams, VehicleResponse } from "../vehicles/Api.js"
import { VehicleQuery } from "../vehicles/VehicleQuery.js"
import { Operation } from "../operations/Api.js"
import { pollHeadersOf } from "../operations/Http.js"
import { Operations } from "../operations/Operations.js"

type Route =
  | { readonly _tag: "Vehicle"; readonly version: ApiVersion; readonly plate: string; readonly params: VehicleQueryParams }
  | { readonly _tag: "Operation"; readonly id: string }

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
const PLAIN_SEGMENT = /^[A-Za-z0-9]{1,32}$/
const PLAIN_ID = /^[A-Za-z0-9_]{1,64}$/
const PLAIN_QUERY = /^[A-Za-z0-9_=&.-]*$/

const decodeV2Params = Schema.decodeUnknownEither(VehicleQueryParams)
const encodeV2 = Schema.encodeSync(VehicleResponse)
const encodeV1 = Schema.encodeSync(V1BasicVehicle)
const encodeOperation = Schema.encodeSync(Operation)

/** The query string's parameters, unless a name repeats. */
const paramsOf = (search: string): Record<string, string> | undefined => {
  const params: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(search)) {
    if (Object.hasOwn(params, name)) return undefined
    params[name] = value
  }
  return params
}

/** The vehicle query or operation poll this request is, in the plainest form only. */
export const routeOf = (request: IncomingMessage): Route | undefined => {
  if (request.method !== "GET" || hasBody(request.headers)) return undefined
  const url = request.url ?? ""
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
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

// VehicleQuery gives the same answer object again for the same stored vehicle: encoded once
const bodies = { v1: new WeakMap<VehicleResponse, string>(), v2: new WeakMap<VehicleResponse, string>() }
const bodyOf = (response: VehicleResponse, version: ApiVersion) => {
  let body = bodies[version].get(response)
  if (body === undefined) {
    body = JSON.stringify(version === "v1" ? encodeV1(response) : encodeV2(response))
    bodies[version].set(response, body)
  }
  return body
}

const json = (status: number, headers: Record<string, string>, value: unknown): Outcome =>
  answer(status, headers, JSON.stringify(value))

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
  return json(
    Errors.STATUS[failure._tag],
    retryAfter === undefined ? headers : { ...headers, "retry-after": retryAfter },
    Errors.errorBodyOf(failure, version)
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

    /** The vehicle query, charged with its admission in one round trip. */
    const serveVehicle = (
      environment: Environment,
      route: Route & { _tag: "Vehicle" },
      keyHash: string,
      requestId: string,
      source: IncomingMessage
    ) => {
      const expected = admission.knownAccount(keyHash)
      if (expected === undefined || expected.principal.environment !== environment) return Effect.succeed(PASS_ON)
      const headers: Record<string, string> = { "x-request-id": requestId }
      // refusals of the query itself are left to HttpApi, which admits first, as the contract orders
      return Effect.matchEffect(query.prepare(expected.principal, route.plate, route.params, route.version, requestId), {
        onFailure: () => Effect.succeed(PASS_ON),
        onSuccess: Option.match({
          onNone: () => Effect.succeed(PASS_ON),
          onSome: ({ consumption, response }) =>
            Effect.matchEffect(admission.admitAndCharge(keyHash, environment, { expected, consumption }), {
              // an unknown key counted nothing: HttpApi answers it
              onFailure: (refused) =>
                refused._tag === "InvalidKey"
                  ? Effect.succeed(PASS_ON)
                  : Effect.map(tooMany(refused, requestId), (failure) => refusal(failure, route.version, headers)),
              onSuccess: ({ admitted, charged, refused }): Effect.Effect<Outcome> => {
                noteAccount(source, admitted.principal.accountId)
                if (!charged) return Effect.succeed({ _tag: "PassOn", admitted })
                rateLimitHeaders(admitted, headers)
                return answerCharged(
                  route.version,
                  requestId,
                  headers,
                  refused !== undefined
                    ? Effect.map(tooMany(refused, requestId), (failure) => refusal(failure, route.version, headers))
                    : Effect.sync(() => answer(200, headers, bodyOf(response, route.version)))
                )
              }
            })
        })
      })
    }

    /** An operation poll: admitted, then read; anything but the operation is left to HttpApi, admitted. */
    const serveOperation = (environment: Environment, id: string, keyHash: string, requestId: string, source: IncomingMessage) =>
      Effect.gen(function*() {
        const result = yield* Effect.either(admission.admitKeyHash(keyHash, environment))
        const headers: Record<string, string> = { "x-request-id": requestId }
        if (Either.isLeft(result)) {
          if (result.left._tag === "InvalidKey") return PASS_ON
          return refusal(yield* tooMany(result.left, requestId), "v2", headers)
        }
        const admitted = result.right
        noteAccount(source, admitted.principal.accountId)
        const read = yield* Effect.exit(Effect.map(operations.get(admitted.principal, id), (operation) =>
          json(200, { ...rateLimitHeaders(admitted, headers), ...pollHeadersOf(operation.status) }, encodeOperation(operation))))
        return Exit.isSuccess(read) ? read.value : { _tag: "PassOn", admitted } satisfies Outcome
      })

    const serve = (environment: Environment, route: Route, keyHash: string, requestId: string, source: IncomingMessage) => {
      noteRequestId(source, requestId)
      return route._tag === "Vehicle"
        ? serveVehicle(environment, route, keyHash, requestId, source)
        : serveOperation(environment, route.id, keyHash, requestId, source)
    }

    const requestIdOf = (header: string | undefined) =>
      Effect.map(Clock.currentTimeMillis, (now) => saneRequestId(header) ?? `req_${ulidAt(now)}`)

    return {
      /** `next` behind the lane, for the listener of `environment`. */
      front: (environment: Environment, next: NodeHandler) =>
        Effect.map(Effect.runtime<never>(), (runtime): NodeHandler => {
          const run = Runtime.runCallback(runtime)
          return (request, response) => {
            const route = routeOf(request)
            const keyHash = route === undefined ? undefined : keyHashOf(headerOf(request, "x-api-key"))
            if (route === undefined || keyHash === undefined || Either.isLeft(keyHash)) return next(request, response)
            const served = Effect.flatMap(requestIdOf(headerOf(request, "x-request-id")), (requestId) =>
              serve(environment, route, keyHash.right, requestId, request)).pipe(withRequestSpan(request))
            run(served, {
              onExit: (exit) => {
                if (Exit.isFailure(exit)) return next(request, response)
                const outcome = exit.value
                if (outcome._tag === "Answer") return write(response, outcome.answer)
                if (outcome.admitted !== undefined) admission.handOver(request, outcome.admitted)
                next(request, response)
              }
            })
          }
        })
    }
  })
}) {}
