/**
 * The request pipeline and error normalisation, exercised on a small probe API with a body, a
 * typed path parameter and failing handlers, served through the real pipeline and services.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApp } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Redacted, Runtime, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { CurrentPrincipal } from "../../src/accounts/Domain.js"
import { ApiKeyAuth, ApiKeyAuthLive } from "../../src/accounts/Security.js"
import { makeRequestPipeline, ServicesLive } from "../../src/Http.js"
import { CurrentEnvironment } from "../../src/platform/RequestContext.js"
import { pgClientLayer } from "../../src/platform/Database.js"
import * as Errors from "../../src/platform/Errors.js"
import { freshDatabase } from "../support/Postgres.js"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { type Call, json, testConfig, withKey } from "../support/TestApp.js"

class ProbeGroup extends HttpApiGroup.make("probe")
  .add(
    HttpApiEndpoint.post("echo", "/v2/probe/echo")
      .setPayload(Schema.Struct({ name: Schema.NonEmptyString }))
      .addSuccess(Schema.Struct({ name: Schema.String, owner: Schema.String }))
  )
  .add(
    HttpApiEndpoint.get("item", "/v2/probe/items/:id")
      .setPath(Schema.Struct({ id: Schema.NumberFromString }))
      .addSuccess(Schema.Struct({ id: Schema.Number }))
  )
  .add(HttpApiEndpoint.get("boom", "/v2/probe/boom").addSuccess(Schema.Void))
  .add(HttpApiEndpoint.get("badSql", "/v2/probe/bad-sql").addSuccess(Schema.Void))
  .middleware(ApiKeyAuth)
{}

class ProbeApi extends HttpApi.make("probe")
  .add(ProbeGroup)
  .addError(Errors.BadRequestJson)
  .addError(Errors.UnauthorizedJson)
  .addError(Errors.ForbiddenJson)
  .addError(Errors.NotFoundJson)
  .addError(Errors.TooManyRequestsJson)
  .addError(Errors.InternalErrorJson)
  .addError(Errors.UnavailableJson)
{}

const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("echo", ({ payload }) => Effect.map(CurrentPrincipal, (p) => ({ name: payload.name, owner: p.owner })))
      .handle("item", ({ path }) => Effect.succeed({ id: path.id }))
      .handle("boom", () => Effect.die(new Error("secret internal detail /etc/passwd")))
      .handle("badSql", () => sql`select * from table_that_does_not_exist`.pipe(Effect.asVoid, Effect.orDie))
  }))

let production: Call
let dispose: () => Promise<void>
let key: string

beforeAll(async () => {
  const url = await freshDatabase()
  const layer = Layer.mergeAll(
    makeRequestPipeline(ProbeApi),
    HttpApiBuilder.api(ProbeApi).pipe(Layer.provide(ProbeHandlers), Layer.provide(ApiKeyAuthLive)),
    Accounts.Default
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, NodeHttpServer.layerContext)),
    Layer.provide(ServicesLive),
    Layer.provide(pgClientLayer(Redacted.make(url), 5)),
    Layer.provide(testConfig())
  )
  const runtime = ManagedRuntime.make(layer)
  const app = await runtime.runPromise(HttpApiBuilder.httpApp)
  const handler = HttpApp.toWebHandlerRuntime(Runtime.provideService(await runtime.runtime(), CurrentEnvironment, "production"))(app)
  production = (path, init) => handler(new Request(`http://probe.test${path}`, init))
  dispose = () => runtime.dispose()
  key = await runtime.runPromise(Effect.gen(function*() {
    const accounts = yield* Accounts
    const account = yield* accounts.create({ owner: "Probe", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
    return (yield* accounts.createKey({ accountId: account.id, environment: "production", name: null })).key
  }))
})
afterAll(() => dispose())

const post = (body: string, headers: Record<string, string> = {}) =>
  production("/v2/probe/echo", withKey(key, { method: "POST", body, headers: { "content-type": "application/json", ...headers } }))

describe("request pipeline", () => {
  it("passes a valid request through to the handler with the caller's account", async () => {
    const res = await post(JSON.stringify({ name: "x" }))
    expect(res.status).toBe(200)
    expect(await json(res)).toEqual({ name: "x", owner: "Probe" })
  })

  it("a body that fails the schema is 400 invalid_request in our body, naming the field", async () => {
    const res = await post(JSON.stringify({ name: "" }))
    expect(res.status).toBe(400)
    const body = await json(res)
    expectShape(body, ErrorResponse("invalid_request"))
    expect(body.error.message).toMatch(/^Invalid request: name: /)
    expect(JSON.stringify(body)).not.toContain("_tag")
  })

  it("malformed JSON is 400 invalid_request", async () => {
    const res = await post("{\"name\": ")
    expect(res.status).toBe(400)
    const body = await json(res)
    expectShape(body, ErrorResponse("invalid_request"))
    expect(body.error.message).toMatch(/Malformed request body/)
  })

  it("a bad path parameter is 400 invalid_request", async () => {
    const res = await production("/v2/probe/items/abc", withKey(key))
    expect(res.status).toBe(400)
    expectShape(await json(res), ErrorResponse("invalid_request"))
    expect((await production("/v2/probe/items/42", withKey(key))).status).toBe(200)
  })

  it("authentication comes before validation: a bad body without a key is 401", async () => {
    const res = await production("/v2/probe/echo", { method: "POST", body: "{", headers: { "content-type": "application/json" } })
    expect(res.status).toBe(401)
    expectShape(await json(res), ErrorResponse("invalid_api_key"))
  })

  it("a defect is 500 internal_error and leaks nothing", async () => {
    const res = await production("/v2/probe/boom", withKey(key))
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(text).not.toMatch(/secret|passwd|Error|stack/)
    const body = JSON.parse(text)
    expectShape(body, ErrorResponse("internal_error"))
    expect(body.error.retryable).toBe(false)
  })

  it("a failing SQL statement is a 500, not an outage, and shows no SQL", async () => {
    const res = await production("/v2/probe/bad-sql", withKey(key))
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(text).not.toMatch(/table_that_does_not_exist|select/i)
    expectShape(JSON.parse(text), ErrorResponse("internal_error"))
  })
})
