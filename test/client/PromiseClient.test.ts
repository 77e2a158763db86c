/**
 * The Promise client against a scripted `fetch`: the Effect client's groups and methods under the
 * same names, the same values, every error of the contract rejected as the same error class by
 * its code, the same retries, and calls (a `waitForOperation` included) aborted by a signal.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makePromiseClient, makeWith, VehicleDataApiError } from "../../src/client/index.js"
import { errorCases, fieldsOf } from "../support/ClientErrors.js"
import { errorAnswer, fakeApi, json, type Script } from "../support/FakeApi.js"

const BASE = "http://api.test"
const KEY = "vda_live_0123456789abcdefghijklmnopqrstuv"
const AT = "2026-11-21T15:00:20.000Z"

const clientOf = (script: Script, retry?: { maxRetries: number } | false) => {
  const api = fakeApi(script)
  return { client: makePromiseClient({ baseUrl: BASE, apiKey: KEY, fetch: api.fetch, ...(retry === undefined ? {} : { retry }) }), sent: api.sent }
}

const rejection = (promise: Promise<unknown>) => promise.then(() => expect.unreachable("it resolved"), (error: unknown) => error)

/** A client's shape: each group's method names, and its own methods. */
const shapeOf = (client: object): unknown =>
  Object.fromEntries(Object.entries(client).map(([name, member]) => [name, typeof member === "function" ? "method" : shapeOf(member)]))

describe("the Promise client", () => {
  it("has the Effect client's groups and methods, by the same names", async () => {
    const effectClient = await Effect.runPromise(makeWith(fakeApi(() => json(200, {})).http, { baseUrl: BASE, apiKey: KEY }))
    const { client } = clientOf(() => json(200, {}))
    expect(shapeOf(client)).toEqual(shapeOf(effectClient))
    expect(Object.keys(client.v1).length).toBe(10)
  })

  it("resolves with the decoded answer, sending the request the contract makes", async () => {
    const { client, sent } = clientOf(() => json(200, { id: "op_1", kind: "vehicle", status: "queued", plate: "AB123CD", createdAt: AT, updatedAt: AT, result: null }))
    const polled = await client.operations.getOperation({ params: { id: "op_1" } })
    expect(polled).toEqual({ id: "op_1", kind: "vehicle", status: "queued", plate: "AB123CD", createdAt: new Date(AT), updatedAt: new Date(AT), result: null })
    expect(sent.map((s) => [s.method, s.url.href, s.headers["x-api-key"]])).toEqual([["GET", `${BASE}/v2/operations/op_1`, KEY]])
    // outside Effect there is no trace to continue: none is sent
    expect(Object.keys(sent[0]!.headers).filter((name) => ["traceparent", "b3"].includes(name))).toEqual([])
    const plans = clientOf(() => json(200, { plans: [] }))
    expect(await plans.client.accounts.listPlans()).toEqual({ plans: [] })
  })

  for (const { answer, expected, name } of errorCases) {
    it(`${name}: rejects with the client's error, by its code`, async () => {
      const { client } = clientOf(() => errorAnswer(answer), false)
      const error = await rejection(answer.v1 ? client.v1.v1GetStatus() : client.accounts.getStatus())
      expect(error).toBeInstanceOf(VehicleDataApiError)
      expect(error).toBeInstanceOf(Error)
      expect(fieldsOf(error)).toEqual(expected)
    })
  }

  it("its own failures are the same error: no answer, an answer the contract does not describe", async () => {
    expect(fieldsOf(await rejection(clientOf(() => "unreachable").client.metering.getUsage()))).toMatchObject({ code: "network_error" })
    expect(fieldsOf(await rejection(clientOf(() => json(200, { nope: 1 })).client.metering.getUsage()))).toMatchObject({
      code: "unexpected_response",
      status: 200
    })
  })

  it("tries 429s and 503s again as the Effect client does", async () => {
    const { client, sent } = clientOf((_, n) =>
      n < 3 ? errorAnswer({ status: n === 1 ? 429 : 503, code: n === 1 ? "rate_limit_exceeded" : "temporarily_unavailable", retryable: true, retryAfter: 0 }) : json(200, { plans: [] }))
    expect(await client.accounts.listPlans()).toEqual({ plans: [] })
    expect(sent).toHaveLength(3)
    const bounded = clientOf(() => errorAnswer({ status: 503, code: "temporarily_unavailable", retryable: true, retryAfter: 0 }), { maxRetries: 1 })
    expect(fieldsOf(await rejection(bounded.client.accounts.listPlans())).code).toBe("temporarily_unavailable")
    expect(bounded.sent).toHaveLength(2)
  })

  it("waitForOperation resolves with the final operation; a signal aborts it, and its polling stops", async () => {
    const operation = (status: string) => ({ id: "op_1", kind: "modules", status, plate: "AB123CD", createdAt: AT, updatedAt: AT, modules: {} })
    const done = clientOf((_, n) => json(200, operation(n < 2 ? "processing" : "failed"), n < 2 ? { "retry-after": "0" } : {}))
    expect(await done.client.waitForOperation("op_1", { deadline: "10 seconds" })).toMatchObject({ status: "failed" })
    expect(done.sent).toHaveLength(2)

    const { client, sent } = clientOf(() => json(200, operation("queued"), { "retry-after": "1" }))
    const controller = new AbortController()
    const waiting = rejection(client.waitForOperation("op_1", undefined, { signal: controller.signal }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    controller.abort(new Error("the caller gave up"))
    expect(await waiting).toEqual(new Error("the caller gave up"))
    const made = sent.length
    expect(made).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect(sent).toHaveLength(made)

    const late = clientOf(() => json(200, operation("queued"), { "retry-after": "1" }))
    const error = await rejection(late.client.waitForOperation("op_1", { deadline: "1500 millis" }))
    expect(fieldsOf(error)).toMatchObject({ code: "deadline_exceeded", retryable: true })
    expect(late.sent).toHaveLength(2)
  })
})
