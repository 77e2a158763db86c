/**
 * The `x-api-key` security scheme of every /v2 endpoint.
 *
 * The key is checked, and the request counted against the per-minute limit, by the request
 * pipeline before routing (so a bad key is a 401 even when the path or body is also invalid);
 * this middleware hands the principal the pipeline found to the handlers and documents the scheme
 * in OpenAPI.
 */
import { Context, Effect, Layer, Option } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import * as Errors from "../platform/http/Errors.js"
import { CurrentPrincipal, type Principal } from "./Domain.js"

/**
 * Set by the request pipeline once the key is valid and the request is admitted; for an endpoint
 * whose handler admits its requests (`RequestAdmission`), the account the key showed last, until
 * the handler admits the request.
 */
export class AdmittedPrincipal extends Context.Reference<Option.Option<Principal>>("vda/AdmittedPrincipal", {
  defaultValue: () => Option.none()
}) {}

export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentPrincipal }>()("vda/ApiKeyAuth", {
  error: Errors.UnauthorizedJson,
  security: {
    apiKey: HttpApiSecurity.apiKey({ in: "header", key: "x-api-key" }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "API key of the account (`vda_live_…` on production, `vda_test_…` on sandbox), sent from servers only"
      )
    )
  }
}) {}

/**
 * The handler runs for every request of a secured endpoint, a missing header included (its
 * credential is then empty): the key itself was checked by the pipeline, so only the principal it
 * admitted counts here.
 */
export const ApiKeyAuthLive = Layer.succeed(
  ApiKeyAuth,
  ApiKeyAuth.of({
    apiKey: Effect.fnUntraced(function*(httpEffect) {
      const admitted = yield* AdmittedPrincipal
      if (Option.isNone(admitted)) return yield* Errors.invalidApiKey("Missing x-api-key header")
      return yield* Effect.provideService(httpEffect, CurrentPrincipal, admitted.value)
    })
  })
)
