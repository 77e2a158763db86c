/**
 * The Effect client: `HttpApiClient` made from the contract the server serves (`Api`), each
 * endpoint a method of its group, every failure the client's one error (`VehicleDataApiError`),
 * 429s and 503s tried again after their `Retry-After`.
 *
 * The probes (`/healthz`, `/readyz`) are left out: they are for whoever runs the service, not for
 * the integrators calling it with a key.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import type { Simplify } from "effect/Types"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApi, HttpApiClient, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"
import { Api } from "../Api.js"
import type { Operation } from "../operations/Api.js"
import { fromAnswer, invalidRequest, unreachable, type VehicleDataApiError } from "./Errors.js"
import { type RetryOptions, withRetries } from "./Retry.js"
import { waitForOperation, type WaitOptions, type FinalOperation } from "./Operations.js"

export interface ClientOptions {
  /** Where the API listens: the production or the sandbox base URL (a key works only on its own). */
  readonly baseUrl: string | URL
  /** The environment's API key (`vda_live_…` or `vda_test_…`); sent as `x-api-key`, never logged. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** How 429s and 503s are tried again (`DEFAULT_RETRY`); `false` fails them at once. */
  readonly retry?: RetryOptions | false
}

type Groups = typeof Api extends HttpApi.HttpApi<infer _Id, infer G> ? G : never
type ServedGroups = Extract<Groups, { readonly topLevel: false }>

/** A request whose query has no required field may leave the query out. */
type OptionalQuery<R> = R extends { readonly query: infer Q } ? {} extends Q ? Omit<R, "query"> & { readonly query?: Q } : R : R

type Request<E extends HttpApiEndpoint.ConstraintRequest> = Simplify<
  OptionalQuery<HttpApiEndpoint.ClientRequest<E["~Params"], E["~Query"], E["~Payload"], E["~Headers"], "decoded-only">>
>

/** An endpoint as a method: its request, as the contract types it, to its answer or the client's error. */
export type EndpointMethod<E extends HttpApiEndpoint.ConstraintRequest> = (
  request: Request<E>
) => Effect.Effect<HttpApiClient.SuccessType<E["~Success"]>, VehicleDataApiError>

/** Every group of the contract by its name, every endpoint of it by its name. */
export type Endpoints = {
  readonly [G in ServedGroups as HttpApiGroup.Identifier<G>]: {
    readonly [E in Extract<HttpApiGroup.Endpoints<G>, HttpApiEndpoint.ConstraintRequest> as E["identifier"]]: EndpointMethod<E>
  }
}

export type Client = Endpoints & {
  /**
   * Polls `GET /v2/operations/{id}` at the pace the API asks (`Retry-After`) until the operation
   * is final; fails with `deadline_exceeded` when it is not by the deadline (default 2 minutes).
   */
  readonly waitForOperation: (id: string, options?: WaitOptions) => Effect.Effect<FinalOperation, VehicleDataApiError>
}

/** A call as it was answered: the decoded value and the answer it came from. */
type Answered = (request: unknown) => Effect.Effect<readonly [unknown, HttpClientResponse.HttpClientResponse], VehicleDataApiError>

/** A request that could not go out: no connection, or one that does not match the contract. */
const notSent = (failure: unknown) =>
  failure instanceof HttpClientError.HttpClientError && failure.reason._tag === "TransportError"
    ? unreachable(failure)
    : invalidRequest(failure)

/** The client over `httpClient`, for the API at `options.baseUrl` with `options.apiKey`. */
export const makeWith = Effect.fnUntraced(
  function*(httpClient: HttpClient.HttpClient, options: ClientOptions) {
    const apiKey = Redacted.isRedacted(options.apiKey) ? options.apiKey : Redacted.make(options.apiKey)
    const authenticated = HttpClient.mapRequest(httpClient, (request) =>
      HttpClientRequest.setHeader(request, "x-api-key", Redacted.value(apiKey)))
    const raw = yield* (HttpApiClient.makeWith(Api, { httpClient: authenticated, baseUrl: options.baseUrl }) as unknown as Effect.Effect<
      Record<string, Record<string, (request: unknown) => Effect.Effect<HttpClientResponse.HttpClientResponse, unknown>>>
    >)
    const retried = withRetries(options.retry)

    const answered: Record<string, Record<string, Answered>> = {}
    HttpApi.reflect(Api, {
      predicate: ({ group }) => !group.topLevel,
      onGroup: ({ group }) => {
        if (!group.topLevel) answered[group.identifier] = {}
      },
      onEndpoint: ({ group, endpoint }) => {
        const call = raw[group.identifier]![endpoint.identifier]!
        const decode = HttpApiClient.decodeResponse(Api, { group: group.identifier, endpoint: endpoint.identifier } as never) as (
          response: HttpClientResponse.HttpClientResponse
        ) => Effect.Effect<unknown, unknown>
        const noQuery = endpoint.query === undefined ? {} : { query: {} }
        answered[group.identifier]![endpoint.identifier] = (request) =>
          Effect.flatMap(
            Effect.mapError(call({ ...noQuery, ...(request as object | undefined), responseMode: "response-only" }), notSent),
            (response) =>
              decode(response).pipe(
                Effect.map((value) => [value, response] as const),
                Effect.catch((failure) => Effect.flatMap(fromAnswer(failure, response), Effect.fail))
              )
          ) as Effect.Effect<readonly [unknown, HttpClientResponse.HttpClientResponse], VehicleDataApiError>
      }
    })

    const client: Record<string, unknown> = {}
    for (const [group, endpoints] of Object.entries(answered)) {
      client[group] = Object.fromEntries(
        Object.entries(endpoints).map(([name, call]) => [name, (request: unknown) => retried(Effect.map(call(request), ([value]) => value))])
      )
    }
    const poll = answered.operations!.getOperation!
    client.waitForOperation = waitForOperation((id) =>
      retried(poll({ params: { id } })) as Effect.Effect<readonly [Operation, HttpClientResponse.HttpClientResponse], VehicleDataApiError>)
    return client as Client
  }
)

/** The client over the `HttpClient` in context. */
export const make = (options: ClientOptions) => Effect.flatMap(Effect.service(HttpClient.HttpClient), (http) => makeWith(http, options))

export class VehicleDataClient extends Context.Service<VehicleDataClient, Client>()("vehicle-data-api/VehicleDataClient") {
  /** The client over the `HttpClient` its user provides (`FetchHttpClient.layer`, Node's…). */
  static readonly layer = (options: ClientOptions) => Layer.effect(VehicleDataClient, make(options))

  /** The client over `fetch`. */
  static readonly layerFetch = (options: ClientOptions) => VehicleDataClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))
}
