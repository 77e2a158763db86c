import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { isFinal } from "../../workflows/shared.js"
import { type DuplicateModule, listed, refusalMessage, type UnsupportedModule } from "../modules/Names.js"
import { currentPrincipal } from "../principal/Security.js"
import { Api, apiGroup } from "../Api.js"
import * as Errors from "../platform/http/Errors.js"
import { preEncodedPerObject } from "../platform/http/PreEncoded.js"
import { withHeaders } from "../platform/http/ResponseHeaders.js"
import { Operation, operationNotFoundMessage } from "./Api.js"
import { INVALID_PLATE_MESSAGE } from "../vehicles/Plates.js"
import type { LimitReached } from "../metering/Metering.js"
import { type InvalidModulesPlate, type ModuleNotEnabled, Operations } from "./Operations.js"

/**
 * An accepted operation: 202 with the `Location` of its polling URL. (Both the 200 and the 202
 * answers carry an Operation; the status is set here rather than left to which schema encodes.)
 */
export const accepted = (id: string) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(
      HttpServerResponse.setHeader(HttpServerResponse.setStatus(response, 202), "location", `/v2/operations/${id}`)
    ))

/** How long a client should wait before polling an operation that is not final again, in seconds. */
export const POLL_AGAIN_SECONDS = 2

/** `Retry-After` for a poll of an operation still running: when to ask again. None once final. */
export const pollHeadersOf = (status: string): Record<string, string> =>
  isFinal(status) ? {} : { "retry-after": String(POLL_AGAIN_SECONDS) }

/** A poll's answer carries its `Retry-After` while the operation runs. */
export const pollHint = (status: string) =>
  isFinal(status)
    ? Effect.void
    : HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(withHeaders(response, pollHeadersOf(status))))

/** A module request refused before anything is consumed, as the contract's error (v1 and v2 alike). */
export const refuseModulesRequest = <A, R>(
  effect: Effect.Effect<A, Errors.ApiError | InvalidModulesPlate | UnsupportedModule | DuplicateModule | ModuleNotEnabled | LimitReached, R>
) =>
  effect.pipe(
    Effect.catchTags({
      InvalidModulesPlate: () =>
        Errors.badRequest("invalid_plate", INVALID_PLATE_MESSAGE),
      UnsupportedModule: (e) => Errors.badRequest("unsupported_module", refusalMessage(e)),
      DuplicateModule: (e) => Errors.badRequest("duplicate_module", refusalMessage(e)),
      ModuleNotEnabled: (e) =>
        Errors.forbidden("module_not_enabled", `Module not enabled for this account: ${listed(e.modules)}`),
      LimitReached: Errors.limitReached
    })
  )

export const OperationsHttpLive = apiGroup(
  Effect.gen(function*() {
    const operations = yield* Operations
    const operationAnswer = preEncodedPerObject(Operation, (operation: Operation) => operation)
    return HttpApiBuilder.group(Api, "operations", (handlers) =>
      handlers
        .handle("createModulesOperation", Effect.fnUntraced(function*({ params, payload }) {
          const principal = yield* currentPrincipal
          const { created, operation } = yield* operations.createModules(principal, params.plate, payload.modules)
          if (created) yield* accepted(operation.id)
          return operation
        }, refuseModulesRequest))
        .handle("getOperation", ({ params }) =>
          Effect.flatMap(currentPrincipal, (principal) => operations.get(principal, params.id)).pipe(
            Effect.tap((operation) => pollHint(operation.status)),
            Effect.map(operationAnswer),
            Effect.catchTag("OperationNotFound", (e) => Errors.notFound("operation_not_found", operationNotFoundMessage(e.id)))
          )))
  }))
