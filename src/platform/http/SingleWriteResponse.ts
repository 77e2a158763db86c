/**
 * Node's server response, with its one-write answer kept. Effect's Node adapter turns Node's
 * `strictContentLength` check on for every answer; Node then gives up writing a final chunk
 * together with the answer's end: it counts the body's bytes a second time, writes head and body
 * as one chunk and an empty chunk after it (a `writev`), and finishes in a step of its own. That
 * was about 1.4 µs of the vehicle query's CPU (6%).
 *
 * The check has nothing to catch here: every answer's Content-Length is the one Effect computed
 * from the very body it writes (text and JSON bodies; no handler sets that header itself, and
 * Effect counts a piped body's bytes on its own). A handler that ever sets Content-Length by hand
 * must keep it true to its body.
 */
import { type IncomingMessage, ServerResponse } from "node:http"

export class SingleWriteResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}

Object.defineProperty(SingleWriteResponse.prototype, "strictContentLength", {
  get: () => false,
  set: () => {},
  configurable: true
})
