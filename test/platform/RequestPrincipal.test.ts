/**
 * The principal a handler reads is the one the request pipeline admitted, carried in the request's
 * context rather than by an HttpApi middleware: HttpApiBuilder merges a middleware's service into
 * the context of every request of its endpoints, a copy of that context per request.
 */
import { expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { HttpApi } from "effect/http-api"
import { Api } from "../../src/Api.js"
import type { Principal } from "../../src/principal/Domain.js"
import { AdmittedPrincipal, currentPrincipal } from "../../src/principal/Security.js"
import { CurrentRequest } from "../../src/platform/http/RequestContext.js"

const principal = { accountId: "acc_1", owner: "Owner" } as Principal

it("no endpoint of the API declares a middleware", () => {
  const withMiddleware: Array<string> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      if (endpoint.middlewares.size > 0) withMiddleware.push(`${group.identifier}.${endpoint.identifier}`)
    }
  })
  expect(withMiddleware).toEqual([])
})

it.effect("a handler reads the principal the pipeline admitted the request for", () =>
  Effect.gen(function*() {
    expect(yield* currentPrincipal.pipe(Effect.provideService(AdmittedPrincipal, principal))).toBe(principal)
  }))

it.effect("without an admitted principal (a handler run outside the pipeline), the request is a 401", () =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(currentPrincipal.pipe(Effect.provideService(CurrentRequest, { requestId: "req_1", accountId: undefined })))
    expect(exit).toEqual(Exit.fail(expect.objectContaining({
      _tag: "Unauthorized",
      error: { code: "invalid_api_key", message: "Missing x-api-key header", requestId: "req_1", retryable: false }
    })))
  }))
