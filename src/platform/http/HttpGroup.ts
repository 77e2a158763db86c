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
 * `Layer.build` would leave its memo map in that context (`Layer.buildWithMemoMap` provides it),
 * so the group layer is built through a memo map of its own instead: a group layer memoizes its
 * build through the memo map it is given (`MemoMap.getOrElseMemoize`), which hands over the build
 * to run, here in an empty context.
 */
import { Context, Effect, Layer, type Scope } from "effect"

/** Runs each layer's build (a group layer's, which needs no other layer) in an empty context. */
const inEmptyContext: Layer.MemoMap = {
  "~effect/Layer/MemoMap": "~effect/Layer/MemoMap",
  get: () => undefined,
  getOrElseMemoize: <RIn, E, ROut>(
    _layer: Layer.Layer<ROut, E, RIn>,
    scope: Scope.Scope,
    build: (memoMap: Layer.MemoMap, scope: Scope.Scope) => Effect.Effect<Context.Context<ROut>, E, RIn>
  ) => Effect.updateContext(build(inEmptyContext, scope), () => Context.empty() as Context.Context<RIn>)
}

/**
 * The group layer `make` answers, built in an empty context (see above). A request finds nothing
 * there: the group may require nothing, so a handler that reads a service per request fails to
 * compile.
 */
export const builtApart = <A, E2, E, R>(make: Effect.Effect<Layer.Layer<A, E2>, E, R>): Layer.Layer<A, E | E2, R> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const group = yield* make
      const built = yield* Layer.buildWithMemoMap(group, inEmptyContext, yield* Effect.scope)
      // the group's routes only: the memo map it was built with stays here
      return Context.omit(Layer.CurrentMemoMap)(built)
    })
  ) as Layer.Layer<A, E | E2, R>
