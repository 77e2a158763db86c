/**
 * Handler groups built apart from the application's services.
 *
 * HttpApiBuilder keeps the context a group layer was built in, and merges it into the context of
 * each of the group's requests: a copy of the request's context per request, unless the kept
 * context is empty. So a group is made in two steps: `make` takes its services from the
 * application's context, and its handlers close over them; then its layer is built in an empty
 * context. (For the same reason the API declares no HttpApi middleware: a group's routes find
 * their middleware in that context.)
 *
 * `Layer.buildWithMemoMap` puts the memo map it builds with in that context, so the group layer is
 * built through a memo map that keeps itself out of the builds it runs: a layer memoizes its build
 * through the memo map it is given (`MemoMap.getOrElseMemoize`), which hands over the build to run.
 */
import { Context, Effect, Layer, Scope } from "effect"

/** `memoMap`, running each build it memoizes without itself in the build's context. */
const keptOutOfBuilds = (memoMap: Layer.MemoMap): Layer.MemoMap => ({
  "~effect/Layer/MemoMap": "~effect/Layer/MemoMap",
  get: (layer, scope) => memoMap.get(layer, scope),
  getOrElseMemoize: <RIn, E, ROut>(
    layer: Layer.Layer<ROut, E, RIn>,
    scope: Scope.Scope,
    build: (memoMap: Layer.MemoMap, scope: Scope.Scope) => Effect.Effect<Context.Context<ROut>, E, RIn>
  ) =>
    memoMap.getOrElseMemoize(layer, scope, (memoMap, scope) =>
      Effect.updateContext(build(memoMap, scope), (context: Context.Context<RIn>) => Context.omit(Layer.CurrentMemoMap)(context) as Context.Context<RIn>))
})

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
      const built = yield* Layer.buildWithMemoMap(group, keptOutOfBuilds(Layer.makeMemoMapUnsafe()), scope).pipe(
        Effect.updateContext(() => Context.make(Scope.Scope, scope))
      )
      // the group's routes only: the memo map it was built with stays here
      return Context.omit(Layer.CurrentMemoMap)(built)
    })
  ) as Layer.Layer<A, E | E2, R>
