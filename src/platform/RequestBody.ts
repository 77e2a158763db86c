/**
 * Reads a request's body once, at most `maxBytes` of it. Past the limit the rest is discarded as
 * it arrives, never by destroying the request: that would reset the connection, and the reset
 * can reach the client before our 413 does. (Effect's own reader destroys the stream at its
 * limit.) The text read is the one the router decodes afterwards.
 *
 * A body read already in front of the application (the lean lane reads the small bodies it may
 * answer) is handed over with the request, so that it is never read twice.
 */
import { FileSystem, HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { IncomingMessage } from "node:http"

const handedOver = new WeakMap<IncomingMessage, string>()

/** The whole body of a small request (its `Content-Length` known), or undefined if the request failed. */
export const readSmallBody = (incoming: IncomingMessage, done: (text: string | undefined) => void) => {
  const chunks: Array<Buffer> = []
  const onData = (chunk: Buffer) => void chunks.push(chunk)
  const onError = () => {
    incoming.off("data", onData)
    done(undefined)
  }
  incoming.on("data", onData)
  incoming.once("error", onError)
  incoming.once("end", () => {
    incoming.off("error", onError)
    done(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
  })
}

/** Passes on a request whose body was read already (by `readSmallBody`). */
export const handOverBody = (incoming: IncomingMessage, text: string) => void handedOver.set(incoming, text)

/** The body's text, or None when it is larger than `maxBytes`. */
export const readBodyText = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) => {
  const incoming = nodeRequestOf(request)
  const read = incoming === undefined ? undefined : handedOver.get(incoming)
  if (read !== undefined) {
    if (Buffer.byteLength(read) > maxBytes) return Effect.succeedNone
    rememberText(request, read)
    return Effect.succeedSome(read)
  }
  if (incoming === undefined) {
    // a request made in-process (web handlers in tests): nothing on a wire to keep sane
    return request.text.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(FileSystem.Size(maxBytes))), Effect.option)
  }
  return Effect.async<Option.Option<string>>((resume) => {
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
 * field (pinned @effect/platform-node version; the input-layer tests fail if it moves).
 */
const rememberText = (request: HttpServerRequest.HttpServerRequest, text: string) => {
  ;(request as unknown as { textEffect: Effect.Effect<string> }).textEffect = Effect.succeed(text)
}
