/**
 * Handler groups built apart from the application's services.
 *
 * HttpApiBuilder keeps the context a group layer was built in, and merges it into the context of
 * each of the group's requests. A group built beside the application's services would copy all of
 * them on every request (a few dozen map entries, twice, on the hottest routes). So a group is made
 * in two steps: `make` takes its services from the application's context, and its handlers close
 * over them; then its layer is built in a context holding only the API's middleware.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { HttpApi, type HttpApiGroup } from "effect/http-api"

/** The middleware any endpoint of `api` runs through, which its groups look up when built. */
export const middlewareOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const keys = new Set<Context.Key<any, any>>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      for (const key of endpoint.middlewares) keys.add(key as Context.Key<any, any>)
    }
  })
  return [...keys]
}

/**
 * The group layer `make` answers, built where the context holds only `middleware` (see above). A
 * request finds nothing else there: the group may require only the middleware (`Middleware`, the
 * services of those keys), so a handler that reads a service per request fails to compile.
 */
export const builtApart = <Middleware>(middleware: ReadonlyArray<Context.Key<any, any>>) =>
<A, E2, E, R>(make: Effect.Effect<Layer.Layer<A, E2, Middleware>, E, R>): Layer.Layer<A, E | E2, R | Middleware> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const group = yield* make
      const scope = yield* Effect.scope
      const context = Context.pick(...middleware)(yield* Effect.context<never>())
      return yield* Layer.build(group).pipe(Effect.updateContext(() => Context.add(context, Scope.Scope, scope)))
    })
  ) as Layer.Layer<A, E | E2, R | Middleware>
