/**
 * The `x-api-key` security scheme of every /v2 endpoint.
 *
 * The key is checked, and the request counted against the per-minute limit, by the request
 * pipeline before routing (so a bad key is a 401 even when the path or body is also invalid);
 * this middleware hands the principal the pipeline found to the handlers and documents the scheme
 * in OpenAPI.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import * as Errors from "../platform/Errors.js"
import { CurrentPrincipal, type Principal } from "./Domain.js"

/** Set by the request pipeline once the key is valid and the request is admitted. */
export class AdmittedPrincipal extends Context.Reference<AdmittedPrincipal>()("vda/AdmittedPrincipal", {
  defaultValue: (): Option.Option<Principal> => Option.none()
}) {}

export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("vda/ApiKeyAuth", {
  failure: Errors.UnauthorizedJson,
  provides: CurrentPrincipal,
  security: {
    apiKey: HttpApiSecurity.apiKey({ in: "header", key: "x-api-key" }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "API key of the account (`vda_live_…` on production, `vda_test_…` on sandbox), sent from servers only"
      )
    )
  }
}) {}

export const ApiKeyAuthLive = Layer.succeed(
  ApiKeyAuth,
  ApiKeyAuth.of({
    apiKey: () =>
      Effect.flatMap(AdmittedPrincipal, Option.match({
        onNone: () => Errors.invalidApiKey("Missing x-api-key header"),
        onSome: Effect.succeed
      }))
  })
)
