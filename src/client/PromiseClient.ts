/**
 * The Promise client, for integrators who do not use Effect: the Effect client's groups and
 * methods under the same names, each running its Effect and settling with its value or rejecting
 * with its `VehicleDataApiError`. Derived from the Effect client, type and object alike.
 */
import { Cause, Effect, Exit } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { type Client, type ClientOptions, makeWith } from "./Client.js"
import type { VehicleDataApiError } from "./Errors.js"

/** What each Promise method takes after its own arguments. */
export interface CallOptions {
  /** Aborts the call (a retry's wait and `waitForOperation`'s polling included); it rejects with the signal's reason. */
  readonly signal?: AbortSignal
}

/** Each method of `T` returning an Effect, as a method returning a Promise; groups alike. */
export type Promised<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer Args) => Effect.Effect<infer A, VehicleDataApiError>
    ? (...args: [...Args, options?: CallOptions]) => Promise<A>
    : Promised<T[K]>
}

export type PromiseClient = Promised<Client>

const settle = async <A>(effect: Effect.Effect<A, VehicleDataApiError>, options: CallOptions | undefined): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect, options?.signal === undefined ? undefined : { signal: options.signal })
  if (Exit.isSuccess(exit)) return exit.value
  if (options?.signal?.aborted && Cause.hasInterruptsOnly(exit.cause)) throw options.signal.reason
  throw Cause.squash(exit.cause)
}

/**
 * `client`'s methods as Promise methods. A method's own arguments are as many as its Effect
 * method declares (`length`); an extra last one is the `CallOptions`.
 */
export const promised = <T extends object>(client: T): Promised<T> =>
  Object.fromEntries(
    Object.entries(client).map(([name, member]) => [
      name,
      typeof member === "function"
        ? (...args: Array<unknown>) => settle(member(...args.slice(0, member.length)), args[member.length] as CallOptions | undefined)
        : promised(member as object)
    ])
  ) as Promised<T>

export interface PromiseClientOptions extends ClientOptions {
  /** The `fetch` to send requests with (the global one by default). */
  readonly fetch?: typeof globalThis.fetch
}

/**
 * The Promise client for the API at `options.baseUrl` with `options.apiKey`, over `fetch`. Its
 * calls run outside any tracer of the caller's, so they send no trace context.
 */
export const makePromiseClient = (options: PromiseClientOptions): PromiseClient => {
  const fetchClient = Effect.runSync(Effect.provide(Effect.service(HttpClient.HttpClient), FetchHttpClient.layer))
  const http = HttpClient.transform(fetchClient, (effect) => {
    const untraced = Effect.provideService(effect, HttpClient.TracerPropagationEnabled, false)
    return options.fetch === undefined ? untraced : Effect.provideService(untraced, FetchHttpClient.Fetch, options.fetch)
  })
  return promised(Effect.runSync(makeWith(http, options)))
}
