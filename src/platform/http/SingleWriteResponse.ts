/**
 * Node's server response, with its one-write answer kept. Effect's Node adapter turns Node's
 * `strictContentLength` check on for every answer, and with it on Node gives up writing a final
 * chunk together with the answer's end: it writes head and body as one chunk and an empty chunk
 * after it (a `writev`), and finishes in a step of its own. That was about 1.4 µs of the vehicle
 * query's CPU (6%).
 *
 * So Node checks an answer only when the check can fail: one written in pieces (a stream), or one
 * written whole by `end` whose body is not the length its head declares. Such a mismatch still
 * throws Node's own `ERR_HTTP_CONTENT_LENGTH_MISMATCH`, and nothing is sent.
 */
import { type IncomingMessage, ServerResponse } from "node:http"

const STRICT = Symbol("strictContentLength")
const NODE_CHECKS = Symbol("nodeChecks")

/** The response with Node's own field the check compares with (`_contentLength`: the head's Content-Length). */
type Checked = ServerResponse & {
  [STRICT]?: boolean
  [NODE_CHECKS]?: boolean
  readonly _contentLength?: number | null
}

/** The bytes of what `end` was given to write last, when it was given bytes or text (nothing counts as none). */
const lengthOf = (chunk: unknown, encoding: unknown) =>
  typeof chunk === "string"
    ? Buffer.byteLength(chunk, typeof encoding === "string" ? encoding as BufferEncoding : "utf8")
    : chunk instanceof Uint8Array ? chunk.byteLength : typeof chunk === "function" || chunk == null ? 0 : undefined

export class SingleWriteResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}

const { end, write } = ServerResponse.prototype

Object.defineProperty(SingleWriteResponse.prototype, "strictContentLength", {
  get(this: Checked) {
    return this[STRICT] === true && this[NODE_CHECKS] === true
  },
  set(this: Checked, strict: boolean) {
    this[STRICT] = strict
  },
  configurable: true
})

Object.assign(SingleWriteResponse.prototype, {
  write(this: Checked, ...args: Parameters<ServerResponse["write"]>) {
    this[NODE_CHECKS] = true
    return write.apply(this, args as Parameters<typeof write>)
  },
  end(this: Checked, chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (typeof this._contentLength === "number" && lengthOf(chunk, encoding) !== this._contentLength) this[NODE_CHECKS] = true
    return (end as (...args: Array<unknown>) => ServerResponse).call(this, chunk, encoding, callback)
  }
})
