/**
 * The Effect client against a scripted API: requests made from the contract (base URL, key,
 * parameters), answers decoded by it, every error of the contract (v2's body and v1's envelope)
 * as the client's one error by its code, the client's own failures, retries after `Retry-After`
 * on 429 and 503 only and within bounds, and `waitForOperation` polling at the API's pace until
 * a final status or its deadline. Timing runs on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { FINAL_STATUSES } from "../../workflows/shared.js"
import { type Client, type ClientOptions, makeWith } from "../../src/client/index.js"
import { ErrorCode } from "../../src/platform/http/Errors.js"
import { ANSWERED_WITH, DETAILS, errorCases, fieldsOf } from "../support/ClientErrors.js"
import { errorAnswer, fakeApi, json, type Script } from "../support/FakeApi.js"

const BASE = "http://api.test/base"
const KEY = "vda_test_0123456789abcdefghijklmnopqrstuv"

const clientOf = (script: Script, options: Partial<ClientOptions> = {}) => {
  const api = fakeApi(script)
  return Effect.map(makeWith(api.http, { baseUrl: BASE, apiKey: KEY, ...options }), (client) => ({ client, sent: api.sent }))
}

const AT = "2026-11-21T15:00:20.000Z"
const operation = (status: string) => ({ id: "op_1", kind: "modules", status, plate: "AB123CD", createdAt: AT, updatedAt: AT, modules: {} })

describe("requests", () => {
  it.effect("go to the base URL with the key, their parameters encoded as the contract says", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(() => json(200, { success: true, found: false, data: null }))
      const answer = yield* client.vehicles.getVehicle({ params: { plate: "ab 123/cd" }, query: { codia: true, sandbox_seed: "s" } })
      expect(answer).toEqual({ success: true, found: false, data: null })
      expect(sent).toHaveLength(1)
      expect(sent[0]!.method).toBe("GET")
      expect(sent[0]!.url.href).toBe(`${BASE}/v2/vehicles/ab%20123%2Fcd?codia=true&sandbox_seed=s`)
      expect(sent[0]!.headers["x-api-key"]).toBe(KEY)
    }))

  it.effect("take the key redacted, and send bodies as JSON", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(() => json(202, operation("queued"), { location: "/v2/operations/op_1" }), {
        apiKey: Redacted.make(KEY)
      })
      const created = yield* client.operations.createModulesOperation({ params: { plate: "AB123CD" }, payload: { modules: ["fines", "vtv"] } })
      expect(created).toMatchObject({ id: "op_1", status: "queued", createdAt: new Date(AT) })
      expect(sent[0]!.headers["x-api-key"]).toBe(KEY)
      expect(sent[0]!.headers["content-type"]).toBe("application/json")
      expect(JSON.parse(sent[0]!.body!)).toEqual({ modules: ["fines", "vtv"] })
    }))

  it.effect("a request the contract refuses is not sent: invalid_request, from the client", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(() => json(200, {}))
      const error = yield* Effect.flip(client.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: { sandbox_seed: "x".repeat(129) } }))
      expect(fieldsOf(error)).toMatchObject({ code: "invalid_request", status: undefined, retryable: false })
      expect(error.message).toMatch(/sandbox_seed/)
      expect(sent).toEqual([])
    }))

  it.effect("the client has the contract's groups and endpoints, by their names, and no probes", () =>
    Effect.gen(function*() {
      const { client } = yield* clientOf(() => json(200, {}))
      const shape = Object.fromEntries(Object.entries(client).map(([name, member]) =>
        [name, typeof member === "function" ? "function" : Object.keys(member as object).sort()]))
      expect(shape).toEqual({
        vehicles: ["getVehicle"],
        operations: ["createModulesOperation", "getOperation"],
        webhooks: ["getWebhookConfig", "listWebhookDeliveries", "sendWebhookTest", "updateWebhookConfig"],
        accounts: ["getStatus", "listPlans"],
        metering: ["getUsage"],
        v1: [
          "v1CreateModulesOperation", "v1CreateReport", "v1GetBasicVehicle", "v1GetModulesOperation", "v1GetReport", "v1GetStatus",
          "v1GetWebhookConfig", "v1ListWebhookDeliveries", "v1SendWebhookTest", "v1UpdateWebhookConfig"
        ],
        waitForOperation: "function"
      })
    }))
})

describe("errors", () => {
  it("the table covers every code of the contract", () => {
    expect(Object.keys(ANSWERED_WITH).sort()).toEqual([...ErrorCode.literals].sort())
  })

  for (const { answer, expected, name } of errorCases) {
    it.effect(`${name}: the client's error, by its code`, () =>
      Effect.gen(function*() {
        const { client } = yield* clientOf(() => errorAnswer(answer), { retry: false })
        const error = answer.v1 ? yield* Effect.flip(client.v1.v1GetStatus()) : yield* Effect.flip(client.accounts.getStatus())
        expect(fieldsOf(error)).toEqual(expected)
        expect(error._tag).toBe("VehicleDataApiError")
      }))
  }

  it.effect("an answer the contract does not describe: unexpected_response, with its status and request id", () =>
    Effect.gen(function*() {
      const answers = [
        json(200, { plans: "none" }, { "x-request-id": "req_odd" }),
        new Response("<html>bad gateway</html>", { status: 502, headers: { "content-type": "text/html", "x-request-id": "req_odd" } }),
        json(500, { oops: true }, { "x-request-id": "req_odd" })
      ]
      for (const answer of answers) {
        const { client } = yield* clientOf(() => answer, { retry: false })
        const error = yield* Effect.flip(client.accounts.listPlans())
        expect(fieldsOf(error)).toEqual({
          code: "unexpected_response",
          message: expect.stringContaining(String(answer.status)),
          status: answer.status,
          requestId: "req_odd",
          retryable: false,
          retryAfter: undefined,
          details: undefined
        })
      }
    }))

  it.effect("no answer: network_error, not tried again", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(() => "unreachable")
      const error = yield* Effect.flip(client.metering.getUsage())
      expect(fieldsOf(error)).toMatchObject({ code: "network_error", status: undefined, requestId: undefined, retryable: true })
      expect(error.message).not.toContain(BASE)
      expect(sent).toHaveLength(1)
    }))
})

describe("retries", () => {
  const limited = (status: 429 | 503, retryAfter?: number) =>
    errorAnswer({ status, code: status === 429 ? "rate_limit_exceeded" : "temporarily_unavailable", retryable: true, ...(retryAfter === undefined ? {} : { retryAfter }) })

  it.effect("a 429 is tried again after its Retry-After, not before", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf((_, n) => (n === 1 ? limited(429, 7) : json(200, { plans: [] })))
      const call = yield* Effect.forkChild(client.accounts.listPlans())
      yield* TestClock.adjust("6999 millis")
      expect(sent).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(call)).toEqual({ plans: [] })
      expect(sent).toHaveLength(2)
    }))

  it.effect("a 503 too; without a Retry-After, after a second", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf((_, n) => (n === 1 ? limited(503) : json(200, { plans: [] })))
      const call = yield* Effect.forkChild(client.accounts.listPlans())
      yield* TestClock.adjust("999 millis")
      expect(sent).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(call)).toEqual({ plans: [] })
    }))

  it.effect("at most maxRetries times, then the last error", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(() => limited(503, 5), { retry: { maxRetries: 2 } })
      const call = yield* Effect.forkChild(Effect.flip(client.accounts.listPlans()))
      yield* TestClock.adjust("1 minute")
      expect(fieldsOf(yield* Fiber.join(call))).toMatchObject({ code: "temporarily_unavailable", status: 503, retryAfter: 5 })
      expect(sent).toHaveLength(3)
    }))

  it.effect("three times by default", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(() => limited(429, 1))
      const call = yield* Effect.forkChild(Effect.flip(client.accounts.listPlans()))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(call)
      expect(sent).toHaveLength(4)
    }))

  it.effect("a wait longer than maxWait (a monthly quota's) fails at once with the typed error", () =>
    Effect.gen(function*() {
      const quota = errorAnswer({ status: 429, code: "quota_exceeded", retryable: true, retryAfter: 9 * 86_400, details: { ...DETAILS, meter: "plate_queries" } })
      const { client, sent } = yield* clientOf(() => quota)
      const error = yield* Effect.flip(client.accounts.listPlans())
      expect(fieldsOf(error)).toMatchObject({ code: "quota_exceeded", status: 429, retryAfter: 9 * 86_400 })
      expect(sent).toHaveLength(1)
      const patient = yield* clientOf(() => limited(429, 120), { retry: { maxWait: "2 minutes", maxRetries: 1 } })
      const call = yield* Effect.forkChild(Effect.flip(patient.client.accounts.listPlans()))
      yield* TestClock.adjust("2 minutes")
      yield* Fiber.join(call)
      expect(patient.sent).toHaveLength(2)
    }))

  it.effect("no other error is tried again, and none with retry: false", () =>
    Effect.gen(function*() {
      for (const [status, code] of [[500, "internal_error"], [400, "invalid_request"], [401, "invalid_api_key"], [404, "operation_not_found"]] as const) {
        const { client, sent } = yield* clientOf(() => errorAnswer({ status, code }))
        expect(fieldsOf(yield* Effect.flip(client.accounts.listPlans())).code).toBe(code)
        expect(sent).toHaveLength(1)
      }
      const { client, sent } = yield* clientOf(() => limited(429, 1), { retry: false })
      expect(fieldsOf(yield* Effect.flip(client.accounts.listPlans())).code).toBe("rate_limit_exceeded")
      expect(sent).toHaveLength(1)
    }))
})

describe("waitForOperation", () => {
  const polls = (statuses: ReadonlyArray<string>, retryAfter: ReadonlyArray<number | undefined>) => (_: unknown, n: number) => {
    const status = statuses[Math.min(n, statuses.length) - 1]!
    const wait = retryAfter[n - 1]
    return json(200, operation(status), wait === undefined ? {} : { "retry-after": String(wait) })
  }

  it.effect("polls GET /v2/operations/{id} at the Retry-After the API answers until the status is final", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(polls(["queued", "processing", "completed"], [2, 3]))
      const wait = yield* Effect.forkChild(client.waitForOperation("op_1"))
      yield* TestClock.adjust("1999 millis")
      expect(sent).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      expect(sent).toHaveLength(2)
      yield* TestClock.adjust("2999 millis")
      expect(sent).toHaveLength(2)
      yield* TestClock.adjust("1 millis")
      const final = yield* Fiber.join(wait)
      expect(final).toMatchObject({ id: "op_1", status: "completed", updatedAt: new Date(AT) })
      expect(sent.map((s) => `${s.method} ${s.url.pathname}`)).toEqual(Array(3).fill("GET /base/v2/operations/op_1"))
    }))

  it.effect("each final status ends it at once", () =>
    Effect.gen(function*() {
      for (const status of FINAL_STATUSES) {
        const { client, sent } = yield* clientOf(polls([status], []))
        expect((yield* client.waitForOperation("op_1")).status).toBe(status)
        expect(sent).toHaveLength(1)
      }
    }))

  it.effect("fails with deadline_exceeded at its deadline, and polls no more", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(polls(["processing"], Array(100).fill(2)))
      const wait = yield* Effect.forkChild(Effect.flip(client.waitForOperation("op_1", { deadline: "5 seconds" })))
      yield* TestClock.adjust("4999 millis")
      expect(wait.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(wait)
      expect(fieldsOf(error)).toMatchObject({ code: "deadline_exceeded", status: undefined, retryable: true })
      expect(error.message).toContain("op_1")
      const made = sent.length
      expect(made).toBe(3)
      yield* TestClock.adjust("1 minute")
      expect(sent).toHaveLength(made)
    }))

  it.effect("is interruptible: interrupted, it polls no more", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf(polls(["queued"], Array(100).fill(2)))
      const wait = yield* Effect.forkChild(client.waitForOperation("op_1"))
      yield* TestClock.adjust("2 seconds")
      expect(sent).toHaveLength(2)
      yield* Fiber.interrupt(wait)
      expect(Exit.hasInterrupts(yield* Fiber.await(wait))).toBe(true)
      yield* TestClock.adjust("1 minute")
      expect(sent).toHaveLength(2)
    }))

  it.effect("a poll's 429 is tried again after its Retry-After; an unknown operation fails it", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientOf((_, n) =>
        n === 1 ? errorAnswer({ status: 429, code: "rate_limit_exceeded", retryable: true, retryAfter: 4 }) : json(200, operation("partial")))
      const wait = yield* Effect.forkChild(client.waitForOperation("op_1"))
      yield* TestClock.adjust("4 seconds")
      expect((yield* Fiber.join(wait)).status).toBe("partial")
      expect(sent).toHaveLength(2)
      const missing = yield* clientOf(() => errorAnswer({ status: 404, code: "operation_not_found" }))
      expect(fieldsOf(yield* Effect.flip(missing.client.waitForOperation("op_nope"))).code).toBe("operation_not_found")
    }))
})

/** The type of the client, checked: requests and answers as the contract types them. */
export const typed = (client: Client) =>
  Effect.gen(function*() {
    const vehicle = yield* client.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: {} })
    // a query with no required field may be left out
    yield* client.vehicles.getVehicle({ params: { plate: "AB123CD" } })
    // @ts-expect-error: a query's fields are typed
    yield* client.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: { codia: "yes" } })
    // @ts-expect-error: a vehicle query needs its plate
    yield* client.vehicles.getVehicle({ query: {} })
    // @ts-expect-error: unknown modules are the API's to refuse, but the payload's shape is typed
    yield* client.operations.createModulesOperation({ params: { plate: "AB123CD" }, payload: { modules: "fines" } })
    const status: "queued" | "processing" | "completed" | "partial" | "failed" = (yield* client.operations.getOperation({ params: { id: "op" } })).status
    const final: "completed" | "partial" | "failed" = (yield* client.waitForOperation("op")).status
    const failure = yield* Effect.flip(client.accounts.getStatus())
    const code: ErrorCode | "network_error" | "unexpected_response" | "deadline_exceeded" = failure.code
    return [vehicle, status, final, code]
  })
