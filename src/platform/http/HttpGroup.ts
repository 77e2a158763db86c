/**
 * Handler groups built apart from the application's services.
 *
 * HttpApiBuilder keeps the context a group layer was built in, and merges it into the context of
 * each of the group's requests, a copy of that context per request. So a group is made in two
 * steps: `make` takes its services from the application's context, and its handlers close over
 * them; then its layer is built in an empty context. (For the same reason the API declares no
 * HttpApi middleware: a group's routes find their middleware in that context.) Building a layer
 * still leaves Effect's memo map there (`Layer.buildWithMemoMap`), so one small merge per request
 * remains; no public API builds a layer without it.
 */
import { Context, Effect, Layer, Scope } from "effect"

/**
 * The group layer `make` answers, built in an empty context (see above). A request finds nothing
 * there: the group may require nothing, so a handler that reads a service per request fails to
 * compile.
 */
export const builtApart = <A, E2, E, R>(make: Effect.Effect<Layer.Layer<A, E2>, E, R>): Layer.Layer<A, E | E2, R> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const group = yield* make
      const scope = yield* Effect.scope
      return yield* Layer.build(group).pipe(Effect.updateContext(() => Context.make(Scope.Scope, scope)))
    })
  ) as Layer.Layer<A, E | E2, R>
