/**
 * The principal of a request, and the `x-api-key` scheme the API documents for it.
 *
 * The key is checked, and the request counted against the per-minute limit, by the request
 * pipeline before routing (so a bad key is a 401 even when the path or body is also invalid). The
 * pipeline puts the principal it admitted in the request's context, where the handlers read it. No
 * HttpApi middleware carries it: a middleware's service is merged into the context of every
 * request of its endpoints, which costs a copy of that context per request.
 */
import { Context, Effect } from "effect"
import * as Errors from "../platform/http/Errors.js"
import type { Principal } from "./Domain.js"

/** The header that carries the API key. */
export const API_KEY_HEADER = "x-api-key"

/** The API key's security scheme in the OpenAPI document, and the name its operations refer to it by. */
export const API_KEY_SCHEME = {
  name: "apiKey",
  scheme: {
    description: "API key of the account (`vda_live_…` on production, `vda_test_…` on sandbox), sent from servers only",
    type: "apiKey",
    name: API_KEY_HEADER,
    in: "header"
  }
} as const

/**
 * Set by the request pipeline once the key is valid and the request is admitted; for an endpoint
 * whose handler admits its requests (`RequestAdmission`), the account the key showed last, until
 * the handler admits the request.
 */
export class AdmittedPrincipal extends Context.Reference<Principal | undefined>("vda/AdmittedPrincipal", {
  defaultValue: () => undefined
}) {}

/**
 * The principal the request was admitted for. Every /v1 and /v2 request is admitted before it
 * reaches a handler; one that was not (a handler run outside the pipeline) is answered 401.
 */
export const currentPrincipal: Effect.Effect<Principal, Errors.Unauthorized> = Effect.withFiber((fiber) => {
  const principal = fiber.getRef(AdmittedPrincipal)
  return principal === undefined ? Errors.invalidApiKey("Missing x-api-key header") : Effect.succeed(principal)
})
