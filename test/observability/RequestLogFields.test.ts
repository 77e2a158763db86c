/**
 * A line logged while a request is served carries the request's id and, once it is admitted, its
 * account, in name order among the line's other annotations (an annotation of the same name
 * wins); a line logged outside a request carries neither.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CurrentRequest, type ServedRequest } from "../../src/platform/http/RequestContext.js"
import { loggerLayer } from "../../src/platform/observability/Logging.js"

/** The lines `effect` logs, parsed. */
const linesOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<Record<string, unknown>> = []
    yield* effect.pipe(Effect.provide(loggerLayer("json", "Info", (line) => void lines.push(JSON.parse(line)))))
    return lines
  })

it.effect("a request's lines carry its id, then its account once admitted", () =>
  Effect.gen(function*() {
    const served: ServedRequest = { requestId: "req_1", accountId: undefined }
    const lines = yield* linesOf(
      Effect.gen(function*() {
        yield* Effect.logInfo("before admission")
        served.accountId = "acc_1"
        yield* Effect.logInfo("admitted")
      }).pipe(Effect.annotateLogs({ zone: "z", apple: "a" }), Effect.provideService(CurrentRequest, served))
    )
    expect(lines.map(({ timestamp: _, ...line }) => line)).toEqual([
      { level: "info", message: "before admission", apple: "a", requestId: "req_1", zone: "z" },
      { level: "info", message: "admitted", accountId: "acc_1", apple: "a", requestId: "req_1", zone: "z" }
    ])
    expect(Object.keys(lines[1]!)).toEqual(["timestamp", "level", "message", "accountId", "apple", "requestId", "zone"])
  }))

it.effect("a line outside a request has neither", () =>
  Effect.gen(function*() {
    const lines = yield* linesOf(Effect.logInfo("started").pipe(Effect.annotateLogs({ port: 1 })))
    expect(lines.map(({ timestamp: _, ...line }) => line)).toEqual([{ level: "info", message: "started", port: 1 }])
  }))

it.effect("an annotation made inside the request wins over the request's own fields", () =>
  Effect.gen(function*() {
    const lines = yield* linesOf(
      Effect.logInfo("created").pipe(
        Effect.annotateLogs({ accountId: "acc_2" }),
        Effect.provideService(CurrentRequest, { requestId: "req_1", accountId: "acc_1" })
      )
    )
    expect(lines.map(({ timestamp: _, ...line }) => line)).toEqual([{ level: "info", message: "created", accountId: "acc_2", requestId: "req_1" }])
  }))
