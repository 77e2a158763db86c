/**
 * The API's own client, as the tests that call a listener use it: the Promise client for
 * ordinary calls, and the Effect client's call with its answer as it came over the wire (status,
 * headers, the JSON body) for tests that check the wire too; a call whose answer the client did
 * not understand fails the test. Nothing is tried again unless a test asks: each call is one
 * request, as a test expects.
 */
import { Cause, Context, type Duration, Effect, Exit } from "effect"
import { FetchHttpClient, HttpClient, type HttpClientResponse } from "effect/http"
import { type Client, makeWith, promised, type RetryOptions, VehicleDataApiError } from "../../src/client/index.js"

/** Where a call's answer is kept, for the call that provides it. */
class LastAnswer extends Context.Reference<{ response?: HttpClientResponse.HttpClientResponse } | undefined>("test/LastAnswer", {
  defaultValue: () => undefined
}) {}

// no trace context is sent: the server sees the requests a plain client sends
const recording = Effect.runSync(Effect.provide(Effect.service(HttpClient.HttpClient), FetchHttpClient.layer)).pipe(
  HttpClient.tap((response) =>
    Effect.map(Effect.service(LastAnswer), (kept) => {
      if (kept !== undefined) kept.response = response
    })),
  HttpClient.transform((effect) => Effect.provideService(effect, HttpClient.TracerPropagationEnabled, false))
)

/** A call's outcome, and the last answer it got, as sent. */
export interface Answer<A> {
  readonly value: A | undefined
  readonly error: VehicleDataApiError | undefined
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The body as received, and parsed. */
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

export interface ApiOptions {
  readonly retry?: RetryOptions
  /** A call not answered by then fails the test. */
  readonly timeout?: Duration.Input
}

const made = new Map<string, ReturnType<typeof make>>()

/** The API at `baseUrl` with `apiKey` (made once for each, as an integrator keeps a client). */
export const apiOf = (baseUrl: string, apiKey: string, options: ApiOptions = {}) => {
  const key = JSON.stringify([baseUrl, apiKey, options])
  let api = made.get(key)
  if (api === undefined) made.set(key, api = make(baseUrl, apiKey, options))
  return api
}

const make = (baseUrl: string, apiKey: string, options: ApiOptions) => {
  const client = Effect.runSync(makeWith(recording, { baseUrl, apiKey, retry: options.retry ?? false }))
  const bounded = <A, E>(effect: Effect.Effect<A, E>) =>
    options.timeout === undefined
      ? effect
      : Effect.timeoutOrElse(effect, { duration: options.timeout, orElse: () => Effect.die(new Error(`no answer within ${options.timeout}`)) })
  return {
    /** The Promise client. */
    client: promised(client),
    /** A call through the Effect client, with the answer it got. */
    answer: async <A>(use: (client: Client) => Effect.Effect<A, VehicleDataApiError>): Promise<Answer<A>> => {
      const kept: { response?: HttpClientResponse.HttpClientResponse } = {}
      const exit = await Effect.runPromiseExit(Effect.provideService(bounded(use(client)), LastAnswer, kept))
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      if (kept.response === undefined) throw error ?? new Error("the call got no answer")
      if (error !== undefined && !(error instanceof VehicleDataApiError)) throw error
      // the client understood the answer: a value for a success, the API's error, by its code, for a refusal
      const understood = kept.response.status < 400
        ? error === undefined
        : error !== undefined && error.status === kept.response.status && error.code !== "unexpected_response"
      if (!understood) throw error ?? new Error(`the client took a ${kept.response.status} for a success`)
      const text = await Effect.runPromise(kept.response.text)
      return {
        value: Exit.isSuccess(exit) ? exit.value : undefined,
        error,
        status: kept.response.status,
        headers: kept.response.headers,
        text,
        body: text === "" ? undefined : JSON.parse(text)
      }
    }
  }
}

export type Api = ReturnType<typeof make>
