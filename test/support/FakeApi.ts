/**
 * A scripted stand-in for the API, for the client's unit tests: an `HttpClient` (for the Effect
 * client) and a `fetch` (for the Promise client) answering each request as a test says, and
 * recording what was sent.
 */
import { Effect } from "effect"
import { HttpClient, HttpClientError, HttpClientResponse } from "effect/http"

export interface Sent {
  readonly method: string
  readonly url: URL
  readonly headers: Record<string, string>
  readonly body: string | undefined
}

/** An answer, or no answer at all (the connection refused). */
export type Script = (sent: Sent, n: number) => Response | "unreachable"

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

export interface ErrorAnswer {
  readonly status: number
  readonly code: string
  readonly retryable?: boolean
  readonly details?: unknown
  readonly retryAfter?: number
  /** v1's envelope, `{success: false, error}`. */
  readonly v1?: boolean
}

export const errorAnswer = (answer: ErrorAnswer, requestId = "req_fake") => {
  const error = {
    code: answer.code,
    message: `refused: ${answer.code}`,
    requestId,
    retryable: answer.retryable ?? false,
    ...(answer.details === undefined ? {} : { details: answer.details })
  }
  return json(answer.status, answer.v1 ? { success: false, error } : { error }, {
    "x-request-id": requestId,
    ...(answer.retryAfter === undefined ? {} : { "retry-after": String(answer.retryAfter) })
  })
}

export const fakeApi = (script: Script) => {
  const sent: Array<Sent> = []
  const record = (entry: Sent) => {
    sent.push(entry)
    return script(entry, sent.length)
  }
  const http = HttpClient.make((request, url) =>
    Effect.suspend(() => {
      const body = request.body._tag === "Uint8Array" ? new TextDecoder().decode(request.body.body) : undefined
      const answer = record({ method: request.method, url, headers: { ...request.headers }, body })
      return answer === "unreachable"
        ? Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description: "connection refused" }) }))
        : Effect.succeed(HttpClientResponse.fromWeb(request, answer))
    })
  )
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init)
    const answer = record({
      method: request.method,
      url: new URL(request.url),
      headers: Object.fromEntries(request.headers),
      body: request.body === null ? undefined : await request.text()
    })
    if (answer === "unreachable") throw new TypeError("fetch failed")
    return answer
  }
  return { http, fetch, sent }
}
