/**
 * One GET to an upstream source, bounded as DESIGN §12 says: a single deadline for everything
 * (name lookup, connection, headers and the whole body: a source that sends its headers and then
 * trickles the body is cut at the deadline like a silent one), and a cap on the body's size.
 */
import { Data, Duration, Effect, Stream } from "effect"
import { HttpClient } from "effect/http"

export const UPSTREAM_DEADLINE = Duration.seconds(8)
export const MAX_UPSTREAM_BODY_BYTES = 1024 * 1024

/** Why the call gave no usable answer; `retryable` when trying again later may help. */
export class UpstreamCallFailed extends Data.TaggedError("UpstreamCallFailed")<{
  readonly reason: "timeout" | "unreachable" | "too_large" | "unreadable"
  readonly retryable: boolean
}> {}

export interface UpstreamReply {
  readonly status: number
  /** The parsed JSON body of a 200 answer (undefined for other statuses). */
  readonly body: unknown
}

const readCapped = (stream: Stream.Stream<Uint8Array, unknown>, maxBytes: number) =>
  stream.pipe(
    Stream.mapError(() => new UpstreamCallFailed({ reason: "unreachable", retryable: true })),
    Stream.runFoldEffect(() => ({ chunks: [] as Array<Uint8Array>, size: 0 }), (read, chunk: Uint8Array) =>
      read.size + chunk.length > maxBytes
        ? Effect.fail(new UpstreamCallFailed({ reason: "too_large", retryable: false }))
        : Effect.succeed({ chunks: [...read.chunks, chunk], size: read.size + chunk.length })),
    Effect.map(({ chunks }) => Buffer.concat(chunks).toString("utf8"))
  )

/**
 * The call as upstream calls make it: the client's own span would record the whole URL (which
 * ends in the plate), and our trace context is not for third parties. `getJson` makes its own span.
 */
const untraced = <A, E, R>(call: Effect.Effect<A, E, R>) =>
  call.pipe(
    Effect.provideService(HttpClient.TracerDisabledWhen, () => true),
    Effect.provideService(HttpClient.TracerPropagationEnabled, false)
  )

const hostOf = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return "invalid"
  }
}

export const getJson = (
  client: HttpClient.HttpClient,
  url: string,
  options: { readonly deadline?: Duration.Input; readonly maxBytes?: number } = {}
): Effect.Effect<UpstreamReply, UpstreamCallFailed> =>
  untraced(client.get(url, { headers: { accept: "application/json" } })).pipe(
    Effect.catch(() => Effect.fail(new UpstreamCallFailed({ reason: "unreachable", retryable: true }))),
    Effect.flatMap((response) => {
      if (response.status !== 200) return Effect.succeed<UpstreamReply>({ status: response.status, body: undefined })
      return readCapped(response.stream, options.maxBytes ?? MAX_UPSTREAM_BODY_BYTES).pipe(
        Effect.flatMap((text) =>
          Effect.try({
            try: (): UpstreamReply => ({ status: 200, body: JSON.parse(text) }),
            catch: () => new UpstreamCallFailed({ reason: "unreadable", retryable: false })
          })
        )
      )
    }),
    Effect.scoped,
    Effect.timeoutOrElse({
      duration: options.deadline ?? UPSTREAM_DEADLINE,
      orElse: () => Effect.fail(new UpstreamCallFailed({ reason: "timeout", retryable: true }))
    }),
    Effect.tap((reply) => Effect.annotateCurrentSpan("http.response.status_code", reply.status)),
    // the host only: the path holds the plate
    Effect.withSpan("upstream.get", { kind: "client", attributes: { "server.address": hostOf(url) } })
  )
