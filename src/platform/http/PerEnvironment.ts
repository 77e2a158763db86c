/**
 * A port with one implementation per environment: both listeners serve one application, so the
 * production and the sandbox implementations of a service live side by side. Each is built once,
 * from its own layer, when the service that holds them is built; a request then picks its
 * environment's with a property read.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { Environment } from "./RequestContext.js"

export type PerEnvironment<S> = { readonly [E in Environment]: S }

/** The service of `key` as each environment's layer builds it, in the caller's scope. */
export const buildPerEnvironment = <I, S, L extends PerEnvironment<Layer.Layer<I, any, any>>>(
  key: Context.Key<I, S>,
  layers: L
): Effect.Effect<PerEnvironment<S>, Layer.Error<L[Environment]>, Layer.Services<L[Environment]> | Scope.Scope> => {
  const built = (layer: Layer.Layer<I, Layer.Error<L[Environment]>, Layer.Services<L[Environment]>>) =>
    Effect.map(Layer.build(layer), Context.get(key))
  return Effect.all({ production: built(layers.production), sandbox: built(layers.sandbox) })
}
