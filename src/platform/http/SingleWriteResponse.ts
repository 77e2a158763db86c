/**
 * Node's server response, with its one-write answer kept. Effect's Node adapter turns Node's
 * `strictContentLength` check on for every answer, and with it on Node gives up writing a final
 * chunk together with the answer's end: it writes head and body as one chunk and an empty chunk
 * after it (a `writev`), and finishes in a step of its own. That was about 1.4 µs of the vehicle
 * query's CPU (6%).
 *
 * So the check is made here for an answer written whole by `end`, before Node's one-write path,
 * and left to Node for an answer written in pieces (a stream): a Content-Length that is not the
 * body's still throws, as Node's `ERR_HTTP_CONTENT_LENGTH_MISMATCH`, and nothing is sent.
 */
import { type IncomingMessage, ServerResponse } from "node:http"

const STRICT = Symbol("strictContentLength")
const IN_PIECES = Symbol("writtenInPieces")

/** The response with the fields of Node's own that its check reads (`_contentLength`: the head's Content-Length). */
type Checked = ServerResponse & {
  [STRICT]?: boolean
  [IN_PIECES]?: boolean
  readonly _contentLength?: number | null
  readonly _hasBody?: boolean
  readonly _removedContLen?: boolean
}

/** Whether Node would check this answer's length (its `strictContentLength(msg)`), asked to. */
const checked = (response: Checked): response is Checked & { readonly _contentLength: number } =>
  response[STRICT] === true && typeof response._contentLength === "number" && response._hasBody === true &&
  response._removedContLen !== true && !response.chunkedEncoding && !response.hasHeader("transfer-encoding")

export class SingleWriteResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}

const mismatch = (actual: number, declared: number) =>
  Object.assign(
    new Error(`Response body's content-length of ${actual} byte(s) does not match the content-length of ${declared} byte(s) set in header`),
    { code: "ERR_HTTP_CONTENT_LENGTH_MISMATCH" }
  )

const { end, write } = ServerResponse.prototype

Object.defineProperty(SingleWriteResponse.prototype, "strictContentLength", {
  get(this: Checked) {
    return this[STRICT] === true && this[IN_PIECES] === true
  },
  set(this: Checked, strict: boolean) {
    this[STRICT] = strict
  },
  configurable: true
})

Object.assign(SingleWriteResponse.prototype, {
  write(this: Checked, ...args: Parameters<ServerResponse["write"]>) {
    this[IN_PIECES] = true
    return write.apply(this, args as Parameters<typeof write>)
  },
  end(this: Checked, chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (this[IN_PIECES] !== true && checked(this)) {
      const length = typeof chunk === "string"
        ? Buffer.byteLength(chunk, typeof encoding === "string" ? encoding as BufferEncoding : "utf8")
        : chunk instanceof Uint8Array ? chunk.byteLength : typeof chunk === "function" || chunk == null ? 0 : undefined
      if (length !== undefined && length !== this._contentLength) throw mismatch(length, this._contentLength)
    }
    return (end as (...args: Array<unknown>) => ServerResponse).call(this, chunk, encoding, callback)
  }
})
