/**
 * The sandbox in process, for tests that must not reach a network: the vehicle query and module
 * operations answered from the sandbox's own generators (the same vehicles, scenarios and module
 * records as the sandbox listener, by plate, seed and scenario), every operation final at once,
 * and its polls. Enrichments (`codia`, `sheet`, `tires`, `classification`) and `debug` need the
 * server's catalog: they are not answered here. Every other route answers 404.
 */
import { Clock, Effect, Schema } from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { failedModule } from "../../workflows/orchestration.js"
import { finalStatus, type ModuleName } from "../../workflows/shared.js"
import { answered } from "../modules/Outcomes.js"
import { refusalMessage, requestedModules } from "../modules/Names.js"
import {
  moduleResultOf,
  type ModuleResults,
  type ModulesOperation,
  ModulesRequest,
  type Operation,
  operationNotFoundMessage
} from "../operations/Api.js"
import { type ErrorBody, type ErrorCode, UNAVAILABLE_RETRY_AFTER_SECONDS } from "../platform/http/Errors.js"
import { generateVehicle } from "../sandbox/Generator.js"
import { syntheticModule } from "../sandbox/Modules.js"
import { sandboxBehaviour } from "../sandbox/Scenarios.js"
import { SOURCE_UNAVAILABLE_MESSAGE, VehicleQueryParams, type VehicleResponse } from "../vehicles/Api.js"
import { INVALID_PLATE_MESSAGE, normalizePlate } from "../vehicles/Plates.js"
import type { VehicleOperation } from "../vehicles/SearchOperation.js"

const VEHICLE = /^\/v2\/vehicles\/([^/]+)$/
const MODULES = /^\/v2\/vehicles\/([^/]+)\/modules$/
const OPERATION = /^\/v2\/operations\/([^/]+)$/

const decodeQuery = Schema.decodeUnknownResult(VehicleQueryParams)
const decodeModulesRequest = Schema.decodeUnknownResult(Schema.fromJsonString(ModulesRequest), { onExcessProperty: "error" })

/** The vehicle query's answer for a valid plate, as the sandbox's source gives it. */
const vehicleResponse = (plate: string, scenario: VehicleQueryParams["sandbox_scenario"], seed: string | undefined): VehicleResponse => {
  const behaviour = sandboxBehaviour(plate, scenario)
  if (behaviour.notFound) return { success: true, found: false, data: null }
  const vehicle = generateVehicle(plate, seed ?? "", behaviour.scenario)
  return {
    success: true,
    found: true,
    data: { plate, ...vehicle.facts, vehicleType: vehicle.vehicleType, sandbox: true, scenario: behaviour.scenario }
  }
}

/** A modules operation over `modules`, run at once: each module as the sandbox's source answers it. */
const modulesResults = (plate: string, modules: ReadonlyArray<ModuleName>, now: number) => {
  const { scenario } = sandboxBehaviour(plate, undefined)
  const outcomes = modules.map((module) => {
    const synthetic = syntheticModule(plate, scenario, module, modules, now)
    return synthetic._tag === "Unavailable" ? failedModule(module, synthetic) : answered(synthetic.data, synthetic.reducedCoverage)
  })
  const results = Object.fromEntries(modules.map((module, i) => [module, moduleResultOf(outcomes[i]!)])) as ModuleResults
  return { status: finalStatus(outcomes), results }
}

/**
 * A fresh sandbox: its operations are kept for its polls. Its answers are the API's: JSON bodies
 * in the contract's shapes, errors in its error body, `X-Request-Id`, and `Location` on a 202.
 */
export const makeSandbox = () => {
  const operations = new Map<string, Operation>()
  let requests = 0

  const json = (status: number, body: unknown, requestId: string, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", "x-request-id": requestId, ...headers }
    })

  const refuse = (status: number, code: ErrorCode, message: string, requestId: string, headers?: Record<string, string>) =>
    json(status, { error: { code, message, requestId, retryable: status === 503 } satisfies ErrorBody }, requestId, headers)

  const accept = (operation: Operation, requestId: string) => {
    operations.set(operation.id, operation)
    return json(202, operation, requestId, { location: `/v2/operations/${operation.id}` })
  }

  /** The answer to `request`, as the sandbox listener would give it. */
  const answer = Effect.fnUntraced(function*(request: Request) {
    const requestId = request.headers.get("x-request-id") ?? `req_sandbox_${++requests}`
    const now = yield* Clock.currentTimeMillis
    const url = new URL(request.url)
    const [, rawPlate] = VEHICLE.exec(url.pathname) ?? MODULES.exec(url.pathname) ?? []
    const plate = rawPlate === undefined ? undefined : normalizePlate(decodeURIComponent(rawPlate))
    if (rawPlate !== undefined && plate === undefined) return refuse(400, "invalid_plate", INVALID_PLATE_MESSAGE, requestId)
    const newOperation = (at: Date) => ({ id: `op_sandbox_${operations.size + 1}`, plate: plate!, createdAt: at, updatedAt: at })

    if (request.method === "GET" && VEHICLE.test(url.pathname)) {
      const query = decodeQuery(Object.fromEntries(url.searchParams))
      if (query._tag === "Failure") return refuse(400, "invalid_request", query.failure.message, requestId)
      const params = query.success
      const behaviour = sandboxBehaviour(plate!, params.sandbox_scenario)
      if (behaviour.scenario === "unavailable") {
        return refuse(503, "temporarily_unavailable", SOURCE_UNAVAILABLE_MESSAGE, requestId, {
          "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS)
        })
      }
      const response = vehicleResponse(plate!, params.sandbox_scenario, params.sandbox_seed)
      if (!behaviour.cacheMiss || params.onMiss !== "search") return json(200, response, requestId)
      const search: VehicleOperation = { ...newOperation(new Date(now)), status: "completed", kind: "vehicle", result: response }
      return accept(search, requestId)
    }

    if (request.method === "POST" && MODULES.test(url.pathname)) {
      const body = decodeModulesRequest(yield* Effect.promise(() => request.text()))
      if (body._tag === "Failure") return refuse(400, "invalid_request", body.failure.message, requestId)
      const modules = requestedModules(body.success.modules)
      if (modules._tag === "Failure") {
        const code = modules.failure._tag === "UnsupportedModule" ? "unsupported_module" : "duplicate_module"
        return refuse(400, code, refusalMessage(modules.failure), requestId)
      }
      const { results, status } = modulesResults(plate!, modules.success, now)
      const operation: ModulesOperation = { ...newOperation(new Date(now)), status, kind: "modules", modules: results }
      return accept(operation, requestId)
    }

    const [, id] = OPERATION.exec(url.pathname) ?? []
    if (request.method === "GET" && id !== undefined) {
      const operation = operations.get(decodeURIComponent(id))
      return operation === undefined
        ? refuse(404, "operation_not_found", operationNotFoundMessage(decodeURIComponent(id)), requestId)
        : json(200, operation, requestId)
    }
    return refuse(404, "invalid_request", `No route for ${request.method} ${url.pathname} in the in-process sandbox`, requestId)
  })

  return { answer }
}

/** An `HttpClient` whose requests a fresh in-process sandbox answers: no network. */
export const sandboxHttpClient = (): HttpClient.HttpClient => {
  const sandbox = makeSandbox()
  return HttpClient.make((request) =>
    HttpClientRequest.toWeb(request).pipe(
      Effect.orDie,
      Effect.flatMap(sandbox.answer),
      Effect.map((response) => HttpClientResponse.fromWeb(request, response))
    )
  )
}
