/**
 * The input layer's rules as pure functions: route matching, URL characters, body headers and
 * JSON (depth counted without recursion, strings and keys checked for NUL and lone surrogates).
 */
import { createServer, IncomingMessage } from "node:http"
import { type AddressInfo, connect, Socket } from "node:net"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { describe, expect, it } from "vitest"
import {
  checkBodyHeaders,
  checkJsonText,
  checkRoute,
  checkUrl,
  connectionOf,
  hasBody,
  headersOf,
  jsonDepth,
  DEFAULT_BODY_LIMITS,
  makePathIndex,
  makeRouteTable,
  tooLarge
} from "../../src/platform/http/RequestInput.js"

const methodsOf = makeRouteTable([
  { method: "GET", path: "/v2/vehicles/:plate" },
  { method: "POST", path: "/v2/vehicles/:plate/modules" },
  { method: "GET", path: "/v2/webhooks/config" },
  { method: "PATCH", path: "/v2/webhooks/config" },
  { method: "GET", path: "/openapi.json" }
])

describe("routes", () => {
  it("match exactly, parameters being one segment", () => {
    expect(methodsOf("/v2/vehicles/AB123CD")).toEqual(["GET"])
    expect(methodsOf("/v2/webhooks/config")).toEqual(["GET", "PATCH"])
    expect(methodsOf("/openapi.json")).toEqual(["GET"])
    for (const path of ["/v2/vehicles/AB123CD/", "/V2/vehicles/AB123CD", "/v2/vehicles", "/v2/vehicles/a/b", "/openapiXjson", "/v2/webhooks/CONFIG"]) {
      expect(methodsOf(path), path).toEqual([])
    }
  })

  it("a path's routes: its template and its routes by method, a template without parameters first", () => {
    const routesAt = makePathIndex([
      { method: "GET", path: "/v1/reports/:id", name: "report" },
      { method: "POST", path: "/v1/reports/latest", name: "latest" },
      { method: "GET", path: "/v2/webhooks/config", name: "config" },
      { method: "PATCH", path: "/v2/webhooks/config", name: "update" }
    ])
    expect(routesAt("/v1/reports/rep_1")).toMatchObject({ template: "/v1/reports/{id}", methods: ["GET"] })
    expect(routesAt("/v1/reports/rep_1")?.byMethod.get("GET")?.name).toBe("report")
    expect(routesAt("/v1/reports/latest")).toMatchObject({ template: "/v1/reports/latest", methods: ["POST"] })
    expect(routesAt("/v2/webhooks/config")?.methods).toEqual(["GET", "PATCH"])
    expect(routesAt("/v2/webhooks/config")?.byMethod.get("PATCH")?.name).toBe("update")
    expect(routesAt("/v1/reports")).toBeUndefined()
    expect(routesAt("/v1/reports/rep_1/")).toBeUndefined()
  })

  it("unknown → 404; HEAD → 405 naming the methods; otherwise nothing to say", () => {
    expect(checkRoute(methodsOf, "GET", "/v2/nope?x=1")).toEqual({ status: 404, message: "No route for GET /v2/nope" })
    expect(checkRoute(methodsOf, "HEAD", "/v2/webhooks/config")).toMatchObject({ status: 405, allow: "GET, PATCH" })
    expect(checkRoute(methodsOf, "GET", "/v2/vehicles/AB123CD?codia=true")).toBeUndefined()
  })
})

describe("URLs", () => {
  it("refuse NUL, lone surrogates and broken percent-encoding anywhere", () => {
    for (const url of ["/v2/operations/op_%00", "/x?a=%00", "/x?%00=a", "/x?a=%ED%A0%80", "/x/%E0%A4%A", "/x?a=%"]) {
      expect(checkUrl(url)?.status, url).toBe(400)
    }
    expect(checkUrl("/v2/vehicles/%C3%91AB123?sandbox_seed=se%C3%B1or+x&codia=true")).toBeUndefined()
    expect(checkUrl("/v2/vehicles/%F0%9F%9A%97")).toBeUndefined() // a whole surrogate pair is fine
  })
})

describe("bodies", () => {
  it("are announced by a length or chunked encoding", () => {
    expect(hasBody({ "content-length": "12" })).toBe(true)
    expect(hasBody({ "transfer-encoding": "chunked" })).toBe(true)
    expect(hasBody({ "content-length": "0" })).toBe(false)
    expect(hasBody({})).toBe(false)
  })

  it("must be JSON (UTF-8) within the size limit", () => {
    expect(checkBodyHeaders({ "content-type": "application/json", "content-length": "10" })).toBeUndefined()
    expect(checkBodyHeaders({ "content-type": "Application/JSON; charset=\"utf-8\"" })).toBeUndefined()
    for (const type of [undefined, "text/plain", "multipart/form-data; boundary=x", "application/json; charset=latin1", "application/json+x"]) {
      expect(checkBodyHeaders({ "content-type": type })?.status, String(type)).toBe(415)
    }
    expect(checkBodyHeaders({ "content-type": "application/json", "content-length": String(DEFAULT_BODY_LIMITS.maxBytes + 1) })?.status).toBe(413)
  })

  it("depth is counted outside strings, escapes included", () => {
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4)
    expect(jsonDepth('{"a":"[[[[[{{{{","b":"\\"[[["}')).toBe(1)
    expect(jsonDepth("[".repeat(100_000) + "]".repeat(100_000))).toBe(100_000)
    expect(jsonDepth("42")).toBe(0)
  })

  it("JSON: malformed, too deep, NUL or lone surrogate → 400; well-formed text → nothing to say", () => {
    expect(checkJsonText("{")?.message).toMatch(/Malformed/)
    expect(checkJsonText("[".repeat(33) + "]".repeat(33))?.message).toMatch(/32 levels/)
    expect(checkJsonText("[".repeat(32) + "]".repeat(32))).toBeUndefined()
    expect(checkJsonText('{"a":["x\\u0000"]}')?.message).toMatch(/NUL/)
    expect(checkJsonText('{"\\udfff":1}')?.message).toMatch(/surrogate/)
    expect(checkJsonText('{"name":"Peña 🚗","n":[1,2,{"k":null}]}')).toBeUndefined()
  })
  it("other limits (REQUEST_BODY_MAX_BYTES, REQUEST_JSON_MAX_DEPTH) apply and are named in the messages", () => {
    const limits = { maxBytes: 1536, maxDepth: 4 }
    expect(checkBodyHeaders({ "content-type": "application/json", "content-length": "1537" }, limits)).toEqual(tooLarge(limits))
    expect(checkBodyHeaders({ "content-type": "application/json", "content-length": "1536" }, limits)).toBeUndefined()
    expect(tooLarge(limits).message).toBe("The body is larger than 1.5 KiB")
    expect(tooLarge().message).toBe("The body is larger than 64 KiB")
    expect(checkJsonText("[[[[[]]]]]", limits)?.message).toBe("Invalid request: JSON nested deeper than 4 levels")
    expect(checkJsonText("[[[[]]]]", limits)).toBeUndefined()
  })
})

describe("headersOf and connectionOf", () => {
  it("read Node's own record and socket of a request Node parsed, and the request's headers otherwise", () => {
    const message = new IncomingMessage(new Socket())
    message.headers = { "x-api-key": "vda_live_a", "set-cookie": ["a=1", "b=2"] }
    const copied = { "x-api-key": "vda_live_a", "set-cookie": "a=1, b=2" }
    expect(headersOf({ source: message, headers: copied })).toBe(message.headers)
    expect(headersOf({ source: new Request("http://localhost/"), headers: copied })).toBe(copied)
    expect(headersOf({ source: undefined, headers: copied })).toBe(copied)
    expect(connectionOf({ source: message })).toBe(message.socket)
    expect(connectionOf({ source: new Request("http://localhost/") })).toBeUndefined()
  })
})

describe("headersOf on a server", () => {
  it("holds what Effect's copy holds for every header the pipeline reads, repeated ones too", async () => {
    const names = ["x-request-id", "x-api-key", "content-type", "content-length", "transfer-encoding"]
    const views = Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
      const node = headersOf(request)
      return HttpServerResponse.jsonUnsafe(names.map((name) => [name, node[name] ?? null, request.headers[name] ?? null]))
    })
    const server = createServer()
    const answer = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      server.on("request", yield* NodeHttpServer.makeHandler(views, { scope: yield* Effect.scope }))
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)).closeAllConnections())
      )
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
      socket.end(
        "POST / HTTP/1.1\r\nHost: vda.test\r\nX-Api-Key: vda_live_a\r\nx-api-key: vda_live_b\r\nX-Request-Id: one\r\n" +
          "X-Request-Id: two\r\nContent-Type: text/plain\r\nContent-Type: application/json\r\nContent-Length: 2\r\n" +
          "Connection: close\r\n\r\n{}"
      )
      return yield* Effect.promise(() => new Promise<string>((resolve) => {
        let text = ""
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
        socket.on("close", () => resolve(text))
      }))
    })))
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual([
      ["x-request-id", "one, two", "one, two"],
      ["x-api-key", "vda_live_a, vda_live_b", "vda_live_a, vda_live_b"],
      ["content-type", "text/plain", "text/plain"],
      ["content-length", "2", "2"],
      ["transfer-encoding", null, null]
    ])
  })
})
