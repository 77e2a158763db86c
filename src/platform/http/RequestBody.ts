/**
 * Reads a request's body once, at most `maxBytes` of it. Past the limit the rest is discarded as
 * it arrives, never by destroying the request: that would reset the connection, and the reset
 * can reach the client before our 413 does. (Effect's own reader destroys the stream at its
 * limit.) The text read is the one the router decodes afterwards.
 */
import { IncomingMessage } from "node:http"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { ByteSize, Effect, Option } from "effect"
import { HttpIncomingMessage, type HttpServerRequest } from "effect/http"

/** The body's text, or None when it is larger than `maxBytes`. */
export const readBodyText = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) => {
  const incoming = nodeRequestOf(request)
  if (incoming === undefined) {
    // a request made in-process (web handlers in tests): nothing on a wire to keep sane
    return request.text.pipe(Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBytes)), Effect.option)
  }
  return Effect.callback<Option.Option<string>>((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= maxBytes) return void chunks.push(chunk)
      detach()
      incoming.resume() // the rest flows to no one; Node closes or reuses the connection after the answer
      resume(Effect.succeedNone)
    }
    const onEnd = () => {
      detach()
      const text = Buffer.concat(chunks).toString("utf8")
      rememberText(request, text)
      resume(Effect.succeedSome(text))
    }
    const onError = () => {
      detach()
      resume(Effect.succeedNone)
    }
    const detach = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
    }
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    return Effect.sync(detach)
  })
}

const nodeRequestOf = (request: HttpServerRequest.HttpServerRequest): IncomingMessage | undefined => {
  try {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    return source instanceof IncomingMessage ? source : undefined
  } catch {
    return undefined
  }
}

/**
 * The router reads the body through `request.text`, which Effect caches per request in this
 * field (pinned @effect/platform-node version, `NodeHttpIncomingMessage`; the input-layer tests
 * fail if it moves).
 */
const rememberText = (request: HttpServerRequest.HttpServerRequest, text: string) => {
  ;(request as unknown as { textEffect: Effect.Effect<string> }).textEffect = Effect.succeed(text)
}
