/**
 * Upstream calls end within their deadline whatever the source does (silent, trickling its body
 * after prompt headers), refuse oversized bodies, and read a well-formed answer.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { FetchHttpClient, HttpClient } from "@effect/platform"
import { type Duration, Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { getJson } from "../../src/platform/UpstreamCall.js"

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

const call = (path: string, deadline: Duration.DurationInput = "600 millis") =>
  Effect.runPromiseExit(
    Effect.flatMap(HttpClient.HttpClient, (client) => getJson(client, `${base}${path}`, { deadline })).pipe(
      Effect.provide(FetchHttpClient.layer)
    )
  )

const failure = (exit: Exit.Exit<unknown, { reason: string; retryable: boolean }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

describe("an upstream call", () => {
  it("reads a 200 answer's JSON and passes other statuses on", async () => {
    expect(await call("/ok")).toEqual(Exit.succeed({ status: 200, body: { found: false } }))
    expect(await call("/missing")).toEqual(Exit.succeed({ status: 404, body: undefined }))
  })

  it("a silent source: timeout (retryable) at the deadline", async () => {
    const started = Date.now()
    expect(failure(await call("/silent"))).toMatchObject({ reason: "timeout", retryable: true })
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it("a source that sends headers and then trickles its body: cut at the same deadline", async () => {
    const started = Date.now()
    expect(failure(await call("/trickle"))).toMatchObject({ reason: "timeout", retryable: true })
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it("a body over 1 MiB is refused, an unreadable one too (neither retryable)", async () => {
    expect(failure(await call("/huge", "5 seconds"))).toMatchObject({ reason: "too_large", retryable: false })
    expect(failure(await call("/broken"))).toMatchObject({ reason: "unreadable", retryable: false })
  })

  it("a closed port: unreachable (retryable)", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(HttpClient.HttpClient, (client) => getJson(client, "http://127.0.0.1:1/x")).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(failure(exit)).toMatchObject({ reason: "unreachable", retryable: true })
  })
})
