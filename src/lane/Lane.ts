/**
 * The lean lane: the hottest routes served straight from Node's request listener, in front of the
 * HttpApi application: the vehicle query (`GET /v2/vehicles/{plate}`, `GET /v1/vehicles/basic`),
 * the operation poll (`GET /v2/operations/{id}`), and the module query that reuses an active
 * operation (`POST /v2/vehicles/{plate}/modules`, answered 200; creating one is HttpApi's), the
 * account's status (`GET /v2/status`), and the liveness probe (`GET /healthz`), which must answer
 * at once however busy the process is.
 *
 * It takes only the plainest form of a request it knows well: a key, a plate, flags and an id of
 * plain characters, and no body but a small JSON one of a module query. It uses the same services
 * and Schemas as the HttpApi handlers. A request waits for its admission in the admission batch as
 * a callback, and for its read (a poll, a reuse check, a status) in that read's batch likewise, so
 * the lane's requests run no fiber of their own; a program runs only where a service's effect is
 * needed (a vehicle not read recently, an error's body). A vehicle query of an account this
 * process has seen, answered without the source, is prepared first, then admitted and charged in
 * one round trip and commit. Everything else, and every request the lane has not counted, is
 * passed on unchanged to the HttpApi application; a request the lane admitted but will not answer
 * itself (its account changed, an operation not found, a failure) is passed on admitted, so it is
 * never counted twice.
 *
 * The contract stays defined once: answers are encoded with the endpoints' own Schemas and errors
 * with the error contract's, and a differential test holds the two paths to the same bytes.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Cause, Effect, Either, Exit, Option, Runtime, Schema } from "effect"
import { type InvalidKey, keyHashOf } from "../accounts/Authentication.js"
import { Admission, type AdmissionRequest, type Admitted, type AdmittedAndCharged, rateLimitHeaders } from "../metering/Admission.js"
import type { ReadRow } from "../platform/ReadAlong.js"
import type { LimitReached, PlainConsumption } from "../metering/Metering.js"
import type { ApiVersion } from "../metering/Meters.js"
import * as Errors from "../platform/Errors.js"
import { ulidAt } from "../platform/Ids.js"
import { perObject, perText } from "../platform/PerObject.js"
import { type Environment, RequestId, saneRequestId } from "../platform/RequestContext.js"
import { handOverBody, readSmallBody } from "../platform/RequestBody.js"
import { type BodyLimits, hasBody, isJsonMediaType, parseJsonText } from "../platform/RequestInput.js"
import { AppConfig } from "../platform/Config.js"
import { LIVE, Liveness } from "../platform/HealthApi.js"
import { type NodeHandler, noteAccount, noteRequestId, withRequestSpan } from "../platform/HttpObservation.js"
import { StatusResponse } from "../accounts/Api.js"
import { AccountStatus, type Status } from "../accounts/Status.js"
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
const HEALTHZ = "/healthz"
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
const requestedModules = (limits: BodyLimits) =>
  perText((body): ReadonlyArray<string> | null => {
    if (Buffer.byteLength(body) > limits.maxBytes) return null
    const parsed = parseJsonText(body, limits)
    if ("refusal" in parsed) return null
    const decoded = decodeModulesRequest(parsed.value)
    return Either.isRight(decoded) ? decoded.right.modules : null
  })

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

/** A v2 vehicle query's flags, decoded (null: not the plainest form, or not valid). */
const v2ParamsOf = perText((search): VehicleQueryParams | null => {
  const params = paramsOf(search)
  if (params === undefined) return null
  const decoded = decodeV2Params(params)
  return Either.isRight(decoded) ? decoded.right : null
})

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
  if (path.startsWith(V2_VEHICLES)) {
    const plate = path.slice(V2_VEHICLES.length)
    const params = v2ParamsOf(search)
    return PLAIN_SEGMENT.test(plate) && params !== null ? { _tag: "Vehicle", version: "v2", plate, params } : undefined
  }
  const params = paramsOf(search)
  if (path === V1_BASIC && params?.plate !== undefined && PLAIN_SEGMENT.test(params.plate)) {
    return { _tag: "Vehicle", version: "v1", plate: params.plate, params: {} }
  }
  return undefined
}

/**
 * A body encoder that encodes each answer object once: the services give the same object again
 * for the same state (a stored vehicle; an operation as one batched read found it).
 */
const encodedOnce = <A extends object>(encode: (value: A) => unknown) => perObject((value: A) => JSON.stringify(encode(value)))

const vehicleBody = { v1: encodedOnce(encodeV1), v2: encodedOnce(encodeV2) }
const operationBody = encodedOnce(encodeOperation)
const modulesOperationBody = encodedOnce(encodeModulesOperation)
const livenessBody = JSON.stringify(Schema.encodeSync(Liveness)(LIVE))
const statusBody = encodedOnce((data: Status) => encodeStatus({ success: true, data }))

/** `headers` (the request's own, which it returns) with a JSON body's. */
const withJsonHeaders = (body: string, headers: Record<string, string>) => {
  headers["content-type"] = "application/json"
  headers["content-length"] = String(Buffer.byteLength(body))
  return headers
}

/** A JSON answer; its headers are the request's own object, completed. */
const answer = (status: number, headers: Record<string, string>, body: string): Outcome => ({
  _tag: "Answer",
  answer: { status, headers: withJsonHeaders(body, headers), body }
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

/** A request the lane took: where to answer it, and what it was given on arrival. */
interface Taken {
  readonly request: IncomingMessage
  readonly response: ServerResponse
  readonly keyHash: string
  readonly requestId: string
  /** When it arrived: the instant it is admitted and charged at. */
  readonly at: number
  /** A module query's body, read already. */
  readonly body: string | undefined
  /** Given to admission: from then on, only admission's answer may pass it on. */
  offered: boolean
  /** Answered, or passed on: nothing more may be done with it. */
  finished: boolean
}

/** What the lane answers at once, or by a program (an error's body, a service's read). */
type Reply = Outcome | Effect.Effect<Outcome>

export class Lane extends Effect.Service<Lane>()("vda/Lane", {
  effect: Effect.gen(function*() {
    const admission = yield* Admission
    const query = yield* VehicleQuery
    const operations = yield* Operations
    const status = yield* AccountStatus
    // the input layer's limits, as HttpApi applies them
    const modulesOf = requestedModules((yield* AppConfig).requestBody)

    // the request id reaches errors through the context; the answers that succeed do without it
    const tooMany = (details: Errors.ErrorDetails, requestId: string) =>
      Effect.flip(Errors.limitReached(details)).pipe(
        Effect.provideService(RequestId, requestId)
      )

    /** The contract's 500. */
    const internalError = (version: ApiVersion, requestId: string, headers: Record<string, string>) =>
      Effect.map(Effect.flip(Errors.internalError), (failure) => refusal(failure, version, headers)).pipe(
        Effect.provideService(RequestId, requestId)
      )

    /** After the request is charged nothing may pass it on (it would be counted again): a failure is a 500. */
    const answerCharged = (version: ApiVersion, requestId: string, headers: Record<string, string>, answer: Effect.Effect<Outcome>) =>
      Effect.catchAllDefect(answer, () => internalError(version, requestId, headers))

    /**
     * A request admission did not let through: a limit's 429 is answered; an unknown key counted
     * nothing, and a failed round trip committed nothing, so HttpApi answers those.
     */
    const notAdmitted = (cause: Cause.Cause<InvalidKey | LimitReached>, version: ApiVersion, requestId: string, headers: Record<string, string>): Reply => {
      const refused = Cause.failureOption(cause)
      if (Option.isNone(refused) || refused.value._tag === "InvalidKey") return PASS_ON
      return Effect.map(tooMany(refused.value, requestId), (failure) => refusal(failure, version, headers))
    }

    /** What a vehicle query's settled admission and charge answer. */
    const settledVehicle = (
      settled: Exit.Exit<AdmittedAndCharged, InvalidKey | LimitReached>,
      version: ApiVersion,
      requestId: string,
      response: VehicleResponse,
      source: IncomingMessage
    ): Reply => {
      const headers: Record<string, string> = { "x-request-id": requestId }
      if (Exit.isFailure(settled)) return notAdmitted(settled.cause, version, requestId, headers)
      const { admitted, charged, refused } = settled.value
      if (!charged) return { _tag: "PassOn", admitted }
      try {
        noteAccount(source, admitted.principal.accountId)
        rateLimitHeaders(admitted, headers)
        if (refused !== undefined) {
          return answerCharged(version, requestId, headers, Effect.map(tooMany(refused, requestId), (failure) => refusal(failure, version, headers)))
        }
        return answer(200, headers, vehicleBody[version](response))
      } catch (error) {
        return answerCharged(version, requestId, headers, Effect.die(error))
      }
    }

    const requestIdAt = (header: string | undefined, now: number) => saneRequestId(header) ?? `req_${ulidAt(now)}`

    return {
      /**
       * `next` behind the lane, for the listener of `environment`. A request waits for its
       * admission in the admission batch as a callback, then for its read (a poll, a reuse check,
       * a status) in that read's batch likewise: no fiber of its own. Only what needs a service's
       * program (a vehicle not read recently, an error's body) runs one, under the request's span.
       */
      front: (environment: Environment, next: NodeHandler) =>
        Effect.map(Effect.zip(Effect.runtime<never>(), Effect.clock), ([runtime, clock]): NodeHandler => {
          const run = Runtime.runCallback(runtime)

          const finish = (taken: Taken, outcome: Outcome) => {
            if (taken.finished) return
            taken.finished = true
            const { body, request, response } = taken
            if (outcome._tag === "Answer") return write(response, outcome.answer)
            if (outcome.admitted !== undefined) admission.handOver(request, outcome.admitted)
            if (body !== undefined) handOverBody(request, body)
            next(request, response)
          }

          const reply = (taken: Taken, outcome: Reply) => {
            if (!Effect.isEffect(outcome)) return finish(taken, outcome)
            run(withRequestSpan(taken.request)(outcome), {
              onExit: (exit) => finish(taken, Exit.isSuccess(exit) ? exit.value : PASS_ON)
            })
          }

          /**
           * Serves a request; a defect (a bug: nothing here should throw) is logged, and the request
           * not yet finished ends as `otherwise` says: passed on as far as admission has gone, or a
           * 500 where passing it on could count it twice. It never hangs: a response left
           * half-written is closed.
           */
          const guarded = (taken: Taken, otherwise: () => Reply, serve: () => void) => {
            try {
              serve()
            } catch (error) {
              run(Effect.logError("the lean lane failed a request", Cause.die(error)))
              try {
                if (!taken.finished) return reply(taken, otherwise())
              } catch {
                // nothing more to try
              }
              if (!taken.response.writableEnded) taken.response.destroy()
            }
          }

          /** Passed on as its admission settled: admitted if it was (nothing charged), as it came if not. */
          const passOnSettled = (settled: Exit.Exit<AdmittedAndCharged, unknown>): Outcome =>
            Exit.isSuccess(settled) ? { _tag: "PassOn", admitted: settled.value.admitted } : PASS_ON

          const offer = (taken: Taken, request: AdmissionRequest, done: Parameters<typeof admission.offer>[1]) => {
            taken.offered = true
            admission.offer(request, done)
          }

          /** The vehicle query of a known account, prepared, then admitted and charged in one round trip. */
          const serveVehicle = (taken: Taken, { params, plate, version }: Route & { _tag: "Vehicle" }) => {
            const expected = admission.knownAccount(taken.keyHash)
            if (expected === undefined || expected.principal.environment !== environment) return finish(taken, PASS_ON)
            const charge = ({ consumption, response }: { readonly consumption: PlainConsumption; readonly response: VehicleResponse }) =>
              offer(taken, { keyHash: taken.keyHash, environment, at: taken.at, prepared: { expected, consumption } }, (settled) => {
                const charged = Exit.isSuccess(settled) && settled.value.charged
                // charged, it may not be passed on (it would be charged again): a defect is a 500
                guarded(
                  taken,
                  () => charged ? internalError(version, taken.requestId, { "x-request-id": taken.requestId }) : passOnSettled(settled),
                  () => reply(taken, settledVehicle(settled, version, taken.requestId, response, taken.request))
                )
              })
            const atOnce = query.prepareAtOnce(expected.principal, plate, params, version, taken.at)
            if (atOnce !== undefined) return charge(atOnce)
            // refusals of the query itself are left to HttpApi, which admits first, as the contract orders
            run(withRequestSpan(taken.request)(query.prepare(expected.principal, plate, params, version, taken.requestId)), {
              onExit: (exit) =>
                guarded(taken, () => PASS_ON, () =>
                  Exit.isSuccess(exit) && Option.isSome(exit.value) ? charge(exit.value.value) : finish(taken, PASS_ON))
            })
          }

          /** Admits a request, then serves it (its account noted, its headers begun, the rows read along if it asked). */
          const admitThen = (
            taken: Taken,
            serveAdmitted: (admitted: Admitted, headers: Record<string, string>, read: ReadonlyArray<ReadRow>) => void,
            along?: AdmissionRequest["along"]
          ) =>
            offer(taken, { keyHash: taken.keyHash, environment, at: taken.at, ...(along === undefined ? {} : { along }) }, (settled) =>
              guarded(taken, () => passOnSettled(settled), () => {
                const headers: Record<string, string> = { "x-request-id": taken.requestId }
                if (Exit.isFailure(settled)) return reply(taken, notAdmitted(settled.cause, "v2", taken.requestId, headers))
                noteAccount(taken.request, settled.value.admitted.principal.accountId)
                serveAdmitted(settled.value.admitted, headers, settled.value.read ?? [])
              }))

          /** What an admitted request's read answers; anything else (a failure, a defect) is left to HttpApi, admitted. */
          const answerRead = <A>(taken: Taken, admitted: Admitted, answerOf: (value: A) => Outcome) => (read: Exit.Exit<A, unknown>) =>
            guarded(taken, () => ({ _tag: "PassOn", admitted }), () =>
              finish(taken, Exit.isSuccess(read) ? answerOf(read.value) : { _tag: "PassOn", admitted }))

          /** An operation poll: admitted, and read in the same round trip. */
          const serveOperation = (taken: Taken, id: string) =>
            admitThen(taken, (admitted, headers, read) => {
              const answerPoll = answerRead(taken, admitted, (operation: Operation) =>
                answer(200, Object.assign(rateLimitHeaders(admitted, headers), pollHeadersOf(operation.status)), operationBody(operation)))
              answerPoll(operations.getRead(admitted.principal, id, read))
            }, { read: operations.pollReadAlong, value: id })

          /**
           * A module query that reuses the active identical operation: admitted, then answered 200
           * (nothing charged). For an account this process has seen, the reuse check is read in the
           * admission's round trip; otherwise it is read after.
           */
          const serveModules = (taken: Taken, plate: string, modules: ReadonlyArray<string>) => {
            const expected = admission.knownAccount(taken.keyHash)?.principal
            const along = expected?.environment === environment ? operations.reuseAlong(expected, plate, modules) : undefined
            admitThen(taken, (admitted, headers, read) => {
              const answerReuse = answerRead(taken, admitted, Option.match({
                // creating the operation is HttpApi's
                onNone: (): Outcome => ({ _tag: "PassOn", admitted }),
                onSome: (running: ModulesOperation) => answer(200, rateLimitHeaders(admitted, headers), modulesOperationBody(running))
              }))
              if (along !== undefined && admitted.principal.accountId === expected?.accountId) {
                return answerReuse(operations.reusableRead(admitted.principal, plate, modules, read))
              }
              operations.offerReusable(admitted.principal, plate, modules, answerReuse)
            }, along)
          }

          /**
           * The account's status: admitted, then read. For an account this process has seen, it is
           * read in the admission's round trip; otherwise it is read after.
           */
          const serveStatus = (taken: Taken) => {
            const expected = admission.knownAccount(taken.keyHash)?.principal
            const along = expected?.environment === environment ? status.readAlong(expected, taken.at) : undefined
            admitThen(taken, (admitted, headers, read) => {
              const answerStatus = answerRead(taken, admitted, (data: Status) =>
                answer(200, rateLimitHeaders(admitted, headers), statusBody(data)))
              const readAlong = along === undefined ? undefined : status.fromRead(admitted.principal, taken.at, along.value, read)
              if (readAlong !== undefined) return answerStatus(Exit.succeed(readAlong))
              status.offerRead(admitted.principal, answerStatus)
            }, along)
          }

          const take = (request: IncomingMessage, response: ServerResponse, route: Route, keyHash: string, body?: string) => {
            const at = clock.unsafeCurrentTimeMillis()
            const requestId = requestIdAt(headerOf(request, "x-request-id"), at)
            const taken: Taken = { request, response, keyHash, at, requestId, body, offered: false, finished: false }
            noteRequestId(request, requestId)
            const version = route._tag === "Vehicle" ? route.version : "v2"
            // once admission has the request, its answer is admission's to give
            guarded(taken, () => (taken.offered ? internalError(version, requestId, { "x-request-id": requestId }) : PASS_ON), () => {
              switch (route._tag) {
                case "Vehicle":
                  return serveVehicle(taken, route)
                case "Operation":
                  return serveOperation(taken, route.id)
                case "Modules": {
                  const modules = modulesOf(body ?? "")
                  return modules === null ? finish(taken, PASS_ON) : serveModules(taken, route.plate, modules)
                }
                case "Status":
                  return serveStatus(taken)
              }
            })
          }

          /** The liveness probe: unauthenticated, uncounted, answered at once. */
          const answerLiveness = (request: IncomingMessage, response: ServerResponse) => {
            const requestId = requestIdAt(headerOf(request, "x-request-id"), clock.unsafeCurrentTimeMillis())
            noteRequestId(request, requestId)
            write(response, { status: 200, headers: withJsonHeaders(livenessBody, { "x-request-id": requestId }), body: livenessBody })
          }

          const recognize = (request: IncomingMessage, response: ServerResponse) => {
            if (request.url === HEALTHZ && request.method === "GET" && !hasBody(request.headers)) return answerLiveness(request, response)
            const route = routeOf(request)
            const keyHash = route === undefined ? undefined : keyHashOf(headerOf(request, "x-api-key"))
            if (route === undefined || keyHash === undefined || Either.isLeft(keyHash)) return next(request, response)
            if (route._tag !== "Modules") return take(request, response, route, keyHash.right)
            // a request that fails while its body arrives has no one left to answer
            readSmallBody(request, (body) => body === undefined ? response.destroy() : take(request, response, route, keyHash.right, body))
          }

          return (request, response) => {
            try {
              recognize(request, response)
            } catch (error) {
              // a bug before the lane took the request: nothing was counted, but its body may be half read
              run(Effect.logError("the lean lane failed to recognize a request", Cause.die(error)))
              if (!response.headersSent) response.destroy()
            }
          }
        })
    }
  })
}) {}
