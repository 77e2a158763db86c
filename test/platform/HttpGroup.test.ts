/**
 * A handler group built apart (`builtApart`) runs its requests in the request's own context: the
 * services its handlers were made with, and the memo map its layer was built with, are not merged
 * into every request's context (which copies that context per request).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { HttpEffect, HttpRouter, type HttpServerRequest } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { builtApart } from "../../src/platform/http/HttpGroup.js"

class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/Greeting") {}

class ProbeGroup extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.get("probe", "/probe", {
    success: Schema.Struct({ greeting: Schema.String, keys: Schema.Array(Schema.String) })
  })
) {}
class ProbeApi extends HttpApi.make("probe").add(ProbeGroup) {}

/** The group's answer: the greeting its handler closed over, and the keys of the request's context. */
const handlersWith = (greeting: { readonly text: string }) =>
  HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
    handlers.handle("probe", () =>
      Effect.map(Effect.context<never>(), (context) => ({ greeting: greeting.text, keys: [...context.mapUnsafe.keys()] }))))

const apart = builtApart(Effect.map(Effect.service(Greeting), handlersWith))
// a group given a service of its own, which it is built with
const composed = builtApart(Effect.succeed(
  HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
    Effect.map(Effect.service(Greeting), (greeting) =>
      handlers.handle("probe", () => Effect.succeed({ greeting: greeting.text, keys: [] })))).pipe(
        Layer.provide(Layer.succeed(Greeting, { text: "hallo" }))
      )
))
// the same group, built as HttpApiBuilder builds one: in the context its services are in
const inPlace = Layer.unwrap(Effect.map(Effect.service(Greeting), handlersWith))

/** The keys of the context a request to the group sees, its requests run in an empty context. */
const keysSeenBy = (group: typeof apart | typeof composed) =>
  Effect.scoped(Effect.gen(function*() {
    const router = yield* HttpRouter.toHttpEffect(
      HttpApiBuilder.layer(ProbeApi).pipe(
        Layer.provide(group),
        Layer.provide(Layer.succeed(Greeting, { text: "hola" })),
        Layer.provide(NodeHttpServer.layerHttpServices)
      )
    )
    const handler = HttpEffect.toWebHandlerWith<never, HttpServerRequest.HttpServerRequest | Scope.Scope>(Context.empty())(router)
    const response = yield* Effect.promise(() => handler(new Request("http://probe.test/probe")))
    expect(response.status).toBe(200)
    return (yield* Effect.promise(() => response.json())) as { greeting: string; keys: Array<string> }
  }))

describe("handler groups built apart", () => {
  it.effect("answer with the services they were made with, none of which is in a request's context", () =>
    Effect.gen(function*() {
      const seen = yield* keysSeenBy(apart)
      expect(seen.greeting).toBe("hola")
      expect(seen.keys).not.toContain(Greeting.key)
      expect(seen.keys).not.toContain(Layer.CurrentMemoMap.key)
    }))

  it.effect("and a group given a service of its own is built with it", () =>
    Effect.gen(function*() {
      expect((yield* keysSeenBy(composed)).greeting).toBe("hallo")
    }))

  it.effect("where a group built in place brings its build's context into every request", () =>
    Effect.gen(function*() {
      const seen = yield* keysSeenBy(inPlace)
      expect(seen.greeting).toBe("hola")
      expect(seen.keys).toContain(Greeting.key)
      expect(seen.keys).toContain(Layer.CurrentMemoMap.key)
    }))
})
