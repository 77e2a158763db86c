/**
 * Webhook events as the workflows produce them (in-process, inline engine): one event per final
 * operation, carrying the polled Operation, recorded once however often the step runs; none while
 * the webhook is off or the operation is not final; an attempt on a webhook switched off since
 * ends the delivery at once. The endpoint is a closed local port: attempts fail and stay pending.
 */
import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OperationActivities } from "../../src/operations/Activities.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { waitFor } from "../support/Processes.js"
import { DeliveriesList, expectShape } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"
import { insertOperation } from "../support/Operations.js"

let app: TestApp
beforeAll(async () => {
  app = await makeTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", SOURCE_RETRY_INITIAL_MS: "20" } })
})
afterAll(() => app?.dispose())

const sandboxCall = (account: TestAccount, path: string, init: RequestInit = {}) =>
  app.sandbox(path, withKey(account.sandbox.key, { ...init, headers: { "content-type": "application/json", ...init.headers } }))

const configure = (account: TestAccount, body: unknown) =>
  sandboxCall(account, "/v2/webhooks/config", { method: "PATCH", body: JSON.stringify(body) })

const deliveries = async (account: TestAccount) => {
  const body = await json(await sandboxCall(account, "/v2/webhooks/deliveries"))
  expectShape(body, DeliveriesList)
  return body.deliveries as Array<any>
}

const finishedOperation = async (account: TestAccount, plate: string, modules: ReadonlyArray<string>) => {
  const res = await sandboxCall(account, `/v2/vehicles/${plate}/modules`, { method: "POST", body: JSON.stringify({ modules }) })
  expect(res.status).toBe(202)
  const { id } = await json(res)
  return waitFor(async () => {
    const body = await json(await sandboxCall(account, `/v2/operations/${id}`))
    return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
  }, "the operation to finish")
}

const activities = <A, E>(f: (a: OperationActivities["Service"]) => Effect.Effect<A, E>) => app.run(Effect.flatMap(OperationActivities, f))

describe("operation events", () => {
  it("a final operation has one event with the polled Operation; running the step again records nothing new", async () => {
    const account = await app.createAccount()
    await configure(account, { url: "https://127.0.0.1:1/events", enabled: true })
    const operation = await finishedOperation(account, "AB000CD", ["fines", "vtv"])

    const [delivery] = await waitFor(async () => {
      const list = await deliveries(account)
      return list.length > 0 ? list : undefined
    }, "the event")
    expect(delivery).toMatchObject({ event: "modules.completed", apiVersion: "v2" })
    expect(delivery.payload).toMatchObject({ id: `evt_${delivery.id}`, type: "modules.completed", apiVersion: "v2" })
    expect(delivery.payload.data).toEqual(operation)

    // an engine retrying the event step (a worker crash after it ran, say) gets the same delivery
    const again = await activities((a) => a.emitEvent({ operationId: operation.id }))
    const third = await activities((a) => a.emitEvent({ operationId: operation.id }))
    expect([again, third]).toEqual([delivery.id, delivery.id])
    expect((await deliveries(account)).map((d) => d.id)).toEqual([delivery.id])
  })

  it("no event while the webhook is disabled or has no URL, nor for an operation still running", async () => {
    const account = await app.createAccount()
    await configure(account, { url: "https://127.0.0.1:1/events", enabled: false })
    await finishedOperation(account, "AB000CE", ["fines"])
    await configure(account, { url: null })
    const other = await finishedOperation(account, "AB000CF", ["vtv"])
    expect(await deliveries(account)).toEqual([])
    expect(await activities((a) => a.emitEvent({ operationId: other.id }))).toBeNull()

    await configure(account, { url: "https://127.0.0.1:1/events", enabled: true })
    const running = await app.run(Effect.gen(function*() {
      yield* insertOperation({
        id: "op_still_running_1",
        accountId: account.id,
        environment: "sandbox",
        kind: "modules",
        apiVersion: "v2",
        plate: "AB000CG",
        modulesKey: "gnc",
        input: { kind: "modules", modules: ["gnc"] },
        createdAt: new Date()
      }).pipe(Effect.orDie)
      return "op_still_running_1"
    }))
    expect(await activities((a) => a.emitEvent({ operationId: running }))).toBeNull()
    expect(await deliveries(account)).toEqual([])
  })

  it("a vehicle search that failed is a vehicle.failed event", async () => {
    const account = await app.createAccount()
    await configure(account, { url: "https://127.0.0.1:1/events", enabled: true })
    const id = "op_vehicle_failed_1"
    await app.run(Effect.gen(function*() {
      yield* insertOperation({
        id,
        accountId: account.id,
        environment: "sandbox",
        kind: "vehicle",
        apiVersion: "v2",
        plate: "AB333CD",
        modulesKey: null,
        input: { kind: "vehicle", params: {}, requestId: "req_test" },
        createdAt: new Date()
      }).pipe(Effect.orDie)
    }))
    await activities((a) =>
      a.finalizeVehicleSearch({
        operationId: id,
        result: { ok: false, error: { code: "temporarily_unavailable", message: "down", retryable: true } }
      })
    )
    const deliveryId = await activities((a) => a.emitEvent({ operationId: id }))
    const [delivery] = await deliveries(account)
    expect(delivery.id).toBe(deliveryId)
    expect(delivery.event).toBe("vehicle.failed")
    expect(delivery.payload.data).toEqual(await json(await sandboxCall(account, `/v2/operations/${id}`)))
    expect(delivery.payload.data).toMatchObject({ kind: "vehicle", status: "failed", result: { error: { code: "temporarily_unavailable" } } })
  })
})

describe("delivery attempts", () => {
  it("an attempt after the webhook was switched off fails the delivery for good", async () => {
    const account = await app.createAccount()
    await configure(account, { url: "https://127.0.0.1:1/events", enabled: true })
    const test = await json(await sandboxCall(account, "/v2/webhooks/test", { method: "POST" }))
    // the engine's first attempt (the endpoint is a closed port), made before the switch: made
    // after it, that attempt would end the delivery itself, as attempt 1
    await waitFor(async () => ((await deliveries(account))[0].attempts === 1 || undefined), "the first attempt")
    await configure(account, { enabled: false })
    const outcome = await activities((a) =>
      Effect.result(a.attemptDelivery({ deliveryId: test.id, attempt: 4, policy: DELIVERY_RETRY }))
    )
    expect(Result.isFailure(outcome) && outcome.failure).toMatchObject({ _tag: "DeliveryFailed", retryable: false })
    const [delivery] = await deliveries(account)
    expect(delivery).toMatchObject({ id: test.id, status: "failed", attempts: 4, responseStatus: null })

    // a settled delivery is never attempted again
    await configure(account, { enabled: true })
    expect(await activities((a) => a.attemptDelivery({ deliveryId: test.id, attempt: 5, policy: DELIVERY_RETRY }))).toBe("failed")
    expect((await deliveries(account))[0]).toMatchObject({ status: "failed", attempts: 4 })
  })

  it("a series its engine starts over (a workflow the server lost) counts on from the attempts made: the limit holds", async () => {
    const account = await app.createAccount()
    await configure(account, { url: "https://127.0.0.1:1/events", enabled: true })
    const test = await json(await sandboxCall(account, "/v2/webhooks/test", { method: "POST" }))
    // the engine's first attempt (the endpoint is a closed port)
    await waitFor(async () => ((await deliveries(account))[0].attempts === 1 || undefined), "the first attempt")
    // a restarted workflow numbers its attempts from 1 again
    for (const expected of [2, 3, 4]) {
      const outcome = await activities((a) => Effect.result(a.attemptDelivery({ deliveryId: test.id, attempt: 1, policy: DELIVERY_RETRY })))
      expect(Result.isFailure(outcome) && outcome.failure).toMatchObject({ _tag: "DeliveryFailed", retryable: true })
      expect((await deliveries(account))[0]).toMatchObject({ status: "pending", attempts: expected })
    }
    const last = await activities((a) => Effect.result(a.attemptDelivery({ deliveryId: test.id, attempt: 1, policy: DELIVERY_RETRY })))
    expect(Result.isFailure(last) && last.failure).toMatchObject({ _tag: "DeliveryFailed", retryable: false })
    expect((await deliveries(account))[0]).toMatchObject({ status: "failed", attempts: 5 })
  })

  it("the last attempt allowed by the policy ends the delivery failed", async () => {
    const account = await app.createAccount()
    await configure(account, { url: "https://127.0.0.1:1/events", enabled: true })
    const test = await json(await sandboxCall(account, "/v2/webhooks/test", { method: "POST" }))
    const outcome = await activities((a) =>
      Effect.result(a.attemptDelivery({ deliveryId: test.id, attempt: 5, policy: DELIVERY_RETRY }))
    )
    expect(Result.isFailure(outcome) && outcome.failure).toMatchObject({ _tag: "DeliveryFailed", retryable: false })
    expect((await deliveries(account))[0]).toMatchObject({ status: "failed", attempts: 5, responseStatus: null })
  })
})
