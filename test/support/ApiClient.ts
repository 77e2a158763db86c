/**
 * The API's own client, as the tests that call a listener use it: the Promise client for
 * ordinary calls, and the Effect client's call with its answer as it came over the wire (status,
 * headers, the JSON body) for tests that check the wire too; a call whose answer the client did
 * not understand fails the test. Nothing is tried again unless a test asks: each call is one
 * request, as a test expects.
 */
import { Cause, Context, Effect, Exit } from "effect"
import { FetchHttpClient, HttpClient, type HttpClientResponse } from "effect/http"
import { type Client, makeWith, promised, type RetryOptions, VehicleDataApiError } from "../../src/client/index.js"

/** Where a call's answer is kept, for the call that provides it. */
class LastAnswer extends Context.Reference<{ response?: HttpClientResponse.HttpClientResponse } | undefined>("test/LastAnswer", {
  defaultValue: () => undefined
}) {}

const recording = HttpClient.tap(
  Effect.runSync(Effect.provide(Effect.service(HttpClient.HttpClient), FetchHttpClient.layer)),
  (response) =>
    Effect.map(Effect.service(LastAnswer), (kept) => {
      if (kept !== undefined) kept.response = response
    })
)

/** A call's outcome, and the last answer it got, as sent. */
export interface Answer<A> {
  readonly value: A | undefined
  readonly error: VehicleDataApiError | undefined
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The body, parsed from the bytes received. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

export const apiOf = (baseUrl: string, apiKey: string, options: { readonly retry?: RetryOptions } = {}) => {
  const client = Effect.runSync(makeWith(recording, { baseUrl, apiKey, retry: options.retry ?? false }))
  return {
    /** The Promise client. */
    client: promised(client),
    /** A call through the Effect client, with the answer it got. */
    answer: async <A>(use: (client: Client) => Effect.Effect<A, VehicleDataApiError>): Promise<Answer<A>> => {
      const kept: { response?: HttpClientResponse.HttpClientResponse } = {}
      const exit = await Effect.runPromiseExit(Effect.provideService(use(client), LastAnswer, kept))
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
        body: text === "" ? undefined : JSON.parse(text)
      }
    }
  }
}

export type Api = ReturnType<typeof apiOf>
