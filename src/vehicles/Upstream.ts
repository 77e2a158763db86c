/**
 * The optional upstream vehicle source (`VEHICLE_UPSTREAM_URL`). Contract:
 *
 *   GET {VEHICLE_UPSTREAM_URL}/vehicles/{PLATE}
 *   200 {"found":true,"vehicle":{make, model, year, firstRegistered, totalOwners, currentOwners,
 *        currentLocation:{city, province}, locations, sourceDate, modelImage}}
 *   200 {"found":false} or 404: no data for the plate
 *
 * Each attempt has 3 s in all (connection, headers and body; at most 1 MiB; VEHICLE_UPSTREAM_TIMEOUT_MS,
 * UPSTREAM_MAX_BODY_BYTES). Timeouts, network
 * errors and 5xx are retried by the caller's policy: VEHICLE_REQUEST_RETRY inside a request, the
 * workflow's SOURCE_RETRY for a vehicle search (one attempt per activity, so retries never nest).
 * Five failed lookups in a row open a circuit breaker for 30 s (UPSTREAM_BREAKER_*), after which one trial
 * lookup decides whether it closes.
 */
import { Context, Data, Duration, Effect, Layer, Option, Schema } from "effect"
import { HttpClient } from "effect/http"
import type { RetryPolicy } from "../platform/sandboxSafe/RetryPolicy.js"
import * as CircuitBreaker from "../platform/upstream/CircuitBreaker.js"
import { AppConfig } from "../platform/config/Config.js"
import { scheduleOf } from "../platform/upstream/RetrySchedule.js"
import * as UpstreamCall from "../platform/upstream/UpstreamCall.js"
import { VehicleFacts } from "./Records.js"

export class SourceUnavailable extends Data.TaggedError("SourceUnavailable")<{ readonly reason: string }> {}

const Answer = Schema.Union([
  Schema.Struct({ found: Schema.Literal(true), vehicle: VehicleFacts }),
  Schema.Struct({ found: Schema.Literal(false) })
])

class Transient extends Data.TaggedError("Transient")<{ readonly reason: string }> {}
class Permanent extends Data.TaggedError("Permanent")<{ readonly reason: string }> {}

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const client = yield* HttpClient.HttpClient
  const { upstream } = config
  const breaker = yield* CircuitBreaker.fromSettings(upstream)
  const baseUrl = Option.map(config.vehicleUpstreamUrl, (url) => url.replace(/\/+$/, ""))

  const decode = Schema.decodeUnknownEffect(Answer)

  const attempt = (url: string) =>
    UpstreamCall.getJson(client, url, { deadline: Duration.millis(upstream.vehicleTimeoutMs), maxBytes: upstream.maxBodyBytes }).pipe(
      Effect.mapError((e) => e.retryable ? new Transient({ reason: e.reason }) : new Permanent({ reason: e.reason })),
      Effect.flatMap((reply): Effect.Effect<Option.Option<VehicleFacts>, Transient | Permanent> => {
        if (reply.status === 404) return Effect.succeed(Option.none<VehicleFacts>())
        if (reply.status >= 500) return Effect.fail(new Transient({ reason: `status ${reply.status}` }))
        if (reply.status !== 200) return Effect.fail(new Permanent({ reason: `status ${reply.status}` }))
        return decode(reply.body).pipe(
          Effect.map((answer) => (answer.found ? Option.some(answer.vehicle) : Option.none())),
          Effect.mapError(() => new Permanent({ reason: "unexpected response body" }))
        )
      })
    )

  return {
    enabled: Option.isSome(baseUrl),
    /** The upstream's answer for a plate, transient failures retried by `retry` if given; fails when it cannot be obtained. */
    fetch: (plate: string, retry?: RetryPolicy): Effect.Effect<Option.Option<VehicleFacts>, SourceUnavailable> =>
      Option.match(baseUrl, {
        onNone: () => Effect.succeed(Option.none()),
        onSome: (base) => {
          const once = attempt(`${base}/vehicles/${encodeURIComponent(plate)}`)
          const attempts = retry === undefined
            ? once
            : Effect.retry(once, { schedule: scheduleOf(retry), while: (e) => e._tag === "Transient" })
          return attempts.pipe(
            breaker,
            Effect.mapError((e) => new SourceUnavailable({ reason: e._tag === "CircuitOpen" ? "circuit open" : e.reason }))
          )
        }
      })
  }
})

export class VehicleUpstream extends Context.Service<VehicleUpstream, Effect.Success<typeof make>>()("vda/VehicleUpstream", { make }) {
  static readonly layer = Layer.effect(VehicleUpstream, make)
}
