/**
 * The request pipeline and error normalisation, exercised on a small probe API with a body, a
 * typed path parameter and failing handlers, served through the real pipeline and services.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Schema, type Scope } from "effect"
import { HttpEffect, HttpRouter, type HttpServerRequest } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { currentPrincipal } from "../../src/principal/Security.js"
import { API_ERRORS } from "../../src/platform/http/Errors.js"
import { makeRequestPipeline, ServicesLive } from "../../src/Http.js"
import { pgClientLayer } from "../../src/platform/db/Database.js"
import { CurrentEnvironment } from "../../src/platform/http/RequestContext.js"
import { freshDatabase } from "../support/Postgres.js"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { json, testConfig, withKey } from "../support/TestApp.js"

class ProbeGroup extends HttpApiGroup.make("probe")
  .add(
    HttpApiEndpoint.post("echo", "/v2/probe/echo", {
      payload: Schema.Struct({ name: Schema.NonEmptyString }),
      success: Schema.Struct({ name: Schema.String, owner: Schema.String }),
      error: API_ERRORS
    }),
    HttpApiEndpoint.get("item", "/v2/probe/items/:id", {
      params: { id: Schema.FiniteFromString },
      success: Schema.Struct({ id: Schema.Number }),
      error: API_ERRORS
    }),
    HttpApiEndpoint.get("boom", "/v2/probe/boom", { success: Schema.Void, error: API_ERRORS }),
    HttpApiEndpoint.get("badSql", "/v2/probe/bad-sql", { success: Schema.Void, error: API_ERRORS })
  )
{}

/** The probe API's endpoints declare the contract's errors, as the real one's do. */
class ProbeApi extends HttpApi.make("probe").add(ProbeGroup) {}

const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("echo", ({ payload }) => Effect.map(currentPrincipal, (p) => ({ name: payload.name, owner: p.owner })))
      .handle("item", ({ params }) => Effect.succeed({ id: params.id }))
      .handle("boom", () => Effect.die(new Error("secret internal detail /etc/passwd")))
      .handle("badSql", () => sql`select * from table_that_does_not_exist`.pipe(Effect.asVoid, Effect.orDie))
  }))

const ProbeRoutes = HttpApiBuilder.layer(ProbeApi).pipe(
  Layer.provide(ProbeHandlers),
  Layer.provide(NodeHttpServer.layerHttpServices)
)

/** The probe app on the production listener's context, and a key of an account of its own. */
class Probe extends Context.Service<Probe, {
  readonly call: (path: string, init?: RequestInit) => Effect.Effect<Response>
  readonly key: string
}>()("test/Probe") {}

const ProbeLive = Layer.effect(
  Probe,
  Effect.gen(function*() {
    const router = yield* HttpRouter.toHttpEffect(ProbeRoutes)
    const app = (yield* makeRequestPipeline(ProbeApi))(router)
    type Services = Layer.Success<typeof ServicesDb>
    // as the production listener does: the environment in the context the requests run with
    const services = Context.add(yield* Effect.context<Layer.Success<typeof ServicesDb>>(), CurrentEnvironment, "production")
    const handler = HttpEffect.toWebHandlerWith<Services, Services | HttpServerRequest.HttpServerRequest | Scope.Scope>(services)(app)
    const accounts = yield* Accounts
    const account = yield* accounts.create({ owner: "Probe", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
    const { key } = yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })
    return {
      call: (path: string, init?: RequestInit) => Effect.promise(() => handler(new Request(`http://probe.test${path}`, init))),
      key
    }
  })
)

const ServicesDb = Layer.mergeAll(ServicesLive, Accounts.layer).pipe(
  Layer.provideMerge(Layer.unwrap(Effect.map(Effect.promise(freshDatabase), (url) => pgClientLayer(Redacted.make(url), 5)))),
  Layer.provideMerge(testConfig())
)

const body = (res: Response) => Effect.promise(() => json(res))
const text = (res: Response) => Effect.promise(() => res.text())

// the services' own clocks run (minute windows, background loops): no TestClock
layer(ProbeLive.pipe(Layer.provideMerge(ServicesDb)), { excludeTestServices: true, timeout: "60 seconds" })("request pipeline", (it) => {
  const post = (payload: string, headers: Record<string, string> = {}) =>
    Effect.flatMap(Effect.service(Probe), ({ call, key }) =>
      call("/v2/probe/echo", withKey(key, { method: "POST", body: payload, headers: { "content-type": "application/json", ...headers } })))

  it.effect("passes a valid request through to the handler with the caller's account", () =>
    Effect.gen(function*() {
      const res = yield* post(JSON.stringify({ name: "x" }))
      expect(res.status).toBe(200)
      expect(yield* body(res)).toEqual({ name: "x", owner: "Probe" })
    }))

  it.effect("a body that fails the schema is 400 invalid_request in our body, naming the field", () =>
    Effect.gen(function*() {
      const res = yield* post(JSON.stringify({ name: "" }))
      expect(res.status).toBe(400)
      const answer = yield* body(res)
      expectShape(answer, ErrorResponse("invalid_request"))
      expect(answer.error.message).toMatch(/^Invalid request: name: /)
      expect(JSON.stringify(answer)).not.toContain("_tag")
    }))

  it.effect("malformed JSON is 400 invalid_request", () =>
    Effect.gen(function*() {
      const res = yield* post("{\"name\": ")
      expect(res.status).toBe(400)
      const answer = yield* body(res)
      expectShape(answer, ErrorResponse("invalid_request"))
      expect(answer.error.message).toMatch(/Malformed request body/)
    }))

  it.effect("a bad path parameter is 400 invalid_request", () =>
    Effect.gen(function*() {
      const { call, key } = yield* Probe
      const res = yield* call("/v2/probe/items/abc", withKey(key))
      expect(res.status).toBe(400)
      expectShape(yield* body(res), ErrorResponse("invalid_request"))
      expect((yield* call("/v2/probe/items/42", withKey(key))).status).toBe(200)
    }))

  it.effect("authentication comes before validation: a bad body without a key is 401", () =>
    Effect.gen(function*() {
      const { call } = yield* Probe
      const res = yield* call("/v2/probe/echo", { method: "POST", body: "{", headers: { "content-type": "application/json" } })
      expect(res.status).toBe(401)
      expectShape(yield* body(res), ErrorResponse("invalid_api_key"))
    }))

  it.effect("a defect is 500 internal_error and leaks nothing", () =>
    Effect.gen(function*() {
      const { call, key } = yield* Probe
      const res = yield* call("/v2/probe/boom", withKey(key))
      expect(res.status).toBe(500)
      const answer = yield* text(res)
      expect(answer).not.toMatch(/secret|passwd|Error|stack/)
      const parsed = JSON.parse(answer)
      expectShape(parsed, ErrorResponse("internal_error"))
      expect(parsed.error.retryable).toBe(false)
    }))

  it.effect("a failing SQL statement is a 500, not an outage, and shows no SQL", () =>
    Effect.gen(function*() {
      const { call, key } = yield* Probe
      const res = yield* call("/v2/probe/bad-sql", withKey(key))
      expect(res.status).toBe(500)
      const answer = yield* text(res)
      expect(answer).not.toMatch(/table_that_does_not_exist|select/i)
      expectShape(JSON.parse(answer), ErrorResponse("internal_error"))
    }))
})

