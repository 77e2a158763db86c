/**
 * Upstream calls end within their deadline whatever the source does (silent, trickling its body
 * after prompt headers), refuse oversized bodies, and read a well-formed answer.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, expect, layer } from "@effect/vitest"
import { Cause, type Duration, Effect, Exit, Option } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { getJson } from "../../src/platform/upstream/UpstreamCall.js"

let server: Http.Server
let base: string
const timers = new Set<NodeJS.Timeout>()

beforeAll(async () => {
  server = Http.createServer((request, response) => {
    switch (request.url) {
      case "/ok":
        return void response.writeHead(200, { "content-type": "application/json" }).end('{"found":false}')
      case "/silent":
        return // never answers
      case "/trickle": {
        response.writeHead(200, { "content-type": "application/json" })
        response.write("{")
        const timer = setInterval(() => response.write(" "), 100) // headers at once, then a byte now and then
        timers.add(timer)
        response.on("close", () => clearInterval(timer))
        return
      }
      case "/huge":
        return void response.writeHead(200, { "content-type": "application/json" }).end(`"${"x".repeat(2 * 1024 * 1024)}"`)
      case "/broken":
        return void response.writeHead(200, { "content-type": "application/json" }).end("{not json")
      default:
        return void response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const timer of timers) clearInterval(timer)
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const call = (path: string, deadline: Duration.Input = "600 millis") =>
  Effect.exit(Effect.flatMap(Effect.service(HttpClient.HttpClient), (client) => getJson(client, `${base}${path}`, { deadline })))

const failure = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined

/** Real time elapsed, in milliseconds, since `started` (the deadlines race real sockets). */
const since = (started: number) => Date.now() - started

// live: the deadlines race a real server's sockets, so they run on the real clock
layer(FetchHttpClient.layer, { excludeTestServices: true })("an upstream call", (it) => {
  it.effect("reads a 200 answer's JSON and passes other statuses on", () =>
    Effect.gen(function*() {
      expect(yield* call("/ok")).toEqual(Exit.succeed({ status: 200, body: { found: false } }))
      expect(yield* call("/missing")).toEqual(Exit.succeed({ status: 404, body: undefined }))
    }))

  it.effect("a silent source: timeout (retryable) at the deadline", () =>
    Effect.gen(function*() {
      const started = Date.now()
      expect(failure(yield* call("/silent"))).toMatchObject({ reason: "timeout", retryable: true })
      expect(since(started)).toBeLessThan(3_000)
    }))

  it.effect("a source that sends headers and then trickles its body: cut at the same deadline", () =>
    Effect.gen(function*() {
      const started = Date.now()
      expect(failure(yield* call("/trickle"))).toMatchObject({ reason: "timeout", retryable: true })
      expect(since(started)).toBeLessThan(3_000)
    }))

  it.effect("a body over 1 MiB is refused, an unreadable one too (neither retryable)", () =>
    Effect.gen(function*() {
      expect(failure(yield* call("/huge", "5 seconds"))).toMatchObject({ reason: "too_large", retryable: false })
      expect(failure(yield* call("/broken"))).toMatchObject({ reason: "unreadable", retryable: false })
    }))

  it.effect("a closed port: unreachable (retryable)", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.flatMap(Effect.service(HttpClient.HttpClient), (client) => getJson(client, "http://127.0.0.1:1/x")))
      expect(failure(exit)).toMatchObject({ reason: "unreachable", retryable: true })
    }))
})
