/**
 * Deliveries exactly as the service makes them (its event encoders, its signature and headers, on
 * the recording sender), taken in by parseWebhookEvent: each is its own event, decoded to what
 * the service reads back for it. v2's test, modules and vehicle events; v1's modules and report
 * events and v1's test.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { toOperation } from "../../src/operations/Operations.js"
import { type NewOperation, OperationsRepo } from "../../src/operations/Repo.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { parseWebhookEvent } from "../../src/receiver/index.js"
import { toV1Report } from "../../src/reports/Report.js"
import { V1EventBodiesLive, v1ModulesFields } from "../../src/v1/Events.js"
import { WebhookDeliveries } from "../../src/webhooks/Deliveries.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import { SentWebhooks, WebhookSender } from "../../src/webhooks/Sender.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"
import { insertOperation } from "../support/Operations.js"
import { Metering } from "../../src/metering/Metering.js"

const SECRET = "whsec_receiver"

const Services = Layer.mergeAll(WebhookDeliveries.layer, WebhooksRepo.layer, Accounts.layer, Metering.layer).pipe(
  Layer.provideMerge(WebhookSender.Test()),
  Layer.provideMerge(OperationsRepo.layer),
  Layer.provide(V1EventBodiesLive),
  Layer.provideMerge(freshDatabaseLayer(2)),
  Layer.provideMerge(testConfig())
)

/** A new account whose production webhook is enabled, signing with SECRET. */
const webhookAccount = Effect.gen(function*() {
  const account = yield* (yield* Accounts).create({ owner: "R", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
  yield* (yield* WebhooksRepo).updateConfig(account.id, "production", SECRET, new Date(), (current) =>
    Effect.succeed({ ...current, url: "https://hooks.example.com/vda", enabled: true, secret: SECRET }))
  return account.id
})

/** The delivery's first attempt, as it went out: its body and headers. */
const sentOf = (deliveryId: string) =>
  Effect.gen(function*() {
    yield* (yield* WebhookDeliveries).attempt({ deliveryId, attempt: 1, policy: DELIVERY_RETRY })
    const outgoing = (yield* SentWebhooks).all.at(-1)!
    expect(outgoing.headers["x-service-delivery"]).toBe(deliveryId)
    return outgoing
  })

/** A final operation of a new account with one failed module (`fines`), and its delivery. */
const failedOperation = (kind: "modules" | "report", apiVersion: "v1" | "v2") =>
  Effect.gen(function*() {
    const accountId = yield* webhookAccount
    const repo = yield* OperationsRepo
    const at = new Date()
    const operation: NewOperation = {
      id: `op_${kind}_${apiVersion}_${at.getTime()}`,
      accountId,
      environment: "production",
      kind,
      apiVersion,
      plate: "AB123CD",
      modulesKey: kind === "modules" ? "fines" : null,
      input: { kind, modules: ["fines"] },
      createdAt: at
    }
    yield* insertOperation(operation)
    yield* repo.recordModule(operation.id, "fines", {
      status: "failed",
      data: null,
      error: { code: "module_unavailable", message: "down", retryable: true },
      warnings: []
    }, at)
    yield* repo.finalize(operation.id, "failed", at)
    const deliveryId = (yield* (yield* WebhookDeliveries).emitForOperation(operation.id))!
    const row = Option.getOrThrow(yield* repo.find(operation.id))
    return { deliveryId, row, modules: yield* repo.modules(operation.id) }
  })

layer(Services, { excludeTestServices: true })("a delivery as the service sends it", (it) => {
  it.effect("v2's test event", () =>
    Effect.gen(function*() {
      const accountId = yield* webhookAccount
      const deliveryId = yield* (yield* WebhookDeliveries).recordTest(accountId, "production")
      const sent = yield* sentOf(deliveryId)
      const received = parseWebhookEvent(sent.body, sent.headers, SECRET)
      expect(received).toMatchObject({ event: "v2.webhook.test", apiVersion: "v2", eventId: `evt_${deliveryId}` })
      if (received.event !== "v2.webhook.test") throw new Error(received.event)
      expect(received.payload.data.message).toBe("This is a test event from the Vehicle Data API")
      expect(received.payload.createdAt).toBeInstanceOf(Date)
    }))

  it.effect("a v2 modules operation's event: the Operation as polled", () =>
    Effect.gen(function*() {
      const { deliveryId, modules, row } = yield* failedOperation("modules", "v2")
      const sent = yield* sentOf(deliveryId)
      const received = parseWebhookEvent(sent.body, sent.headers, SECRET)
      expect(received).toMatchObject({ event: "v2.modules.failed", apiVersion: "v2", eventId: `evt_${deliveryId}` })
      if (received.event !== "v2.modules.failed") throw new Error(received.event)
      expect(received.payload.data).toEqual(toOperation(row, modules))
      expect(received.payload.data.modules.fines?.error?.code).toBe("module_unavailable")
    }))

  it.effect("a v2 vehicle search's event", () =>
    Effect.gen(function*() {
      const accountId = yield* webhookAccount
      const repo = yield* OperationsRepo
      const at = new Date()
      const id = `op_vehicle_${at.getTime()}`
      yield* insertOperation({
        id,
        accountId,
        environment: "production",
        kind: "vehicle",
        apiVersion: "v2",
        plate: "AB333CD",
        modulesKey: null,
        input: { kind: "vehicle", params: {}, requestId: "req_receiver" },
        createdAt: at
      })
      const error = { code: "temporarily_unavailable", message: "down", retryable: true }
      yield* repo.finalize(id, "failed", at, { ok: false, error })
      const deliveryId = (yield* (yield* WebhookDeliveries).emitForOperation(id))!
      const sent = yield* sentOf(deliveryId)
      const received = parseWebhookEvent(sent.body, sent.headers, SECRET)
      expect(received.event).toBe("v2.vehicle.failed")
      if (received.event !== "v2.vehicle.failed") throw new Error(received.event)
      expect(received.payload.data).toEqual(toOperation(Option.getOrThrow(yield* repo.find(id)), []))
      expect(received.payload.data.result).toEqual({ error })
    }))

  it.effect("a v1 modules operation's event: v1's flat body", () =>
    Effect.gen(function*() {
      const { deliveryId, modules, row } = yield* failedOperation("modules", "v1")
      const sent = yield* sentOf(deliveryId)
      const received = parseWebhookEvent(sent.body, sent.headers, SECRET)
      expect(received).toMatchObject({ event: "v1.modules.failed", apiVersion: "v1", eventId: `evt_${deliveryId}` })
      if (received.event !== "v1.modules.failed") throw new Error(received.event)
      const operation = toOperation(row, modules)
      if (operation.kind !== "modules") throw new Error(operation.kind)
      expect(received.payload).toEqual({ eventId: `evt_${deliveryId}`, event: "modules.failed", ...v1ModulesFields(operation) })
      expect(received.payload.completedAt).toEqual(row.updatedAt)
    }))

  it.effect("a v1 report's event: the V1Report as polled", () =>
    Effect.gen(function*() {
      const { deliveryId, modules, row } = yield* failedOperation("report", "v1")
      const sent = yield* sentOf(deliveryId)
      const received = parseWebhookEvent(sent.body, sent.headers, SECRET)
      expect(received).toMatchObject({ event: "v1.report.failed", apiVersion: "v1", eventId: `evt_${deliveryId}` })
      if (received.event !== "v1.report.failed") throw new Error(received.event)
      expect(received.payload).toEqual({ eventId: `evt_${deliveryId}`, event: "report.failed", ...toV1Report(row, modules) })
    }))

  it.effect("v1's test event: a sample report.completed", () =>
    Effect.gen(function*() {
      const accountId = yield* webhookAccount
      const deliveryId = yield* (yield* WebhookDeliveries).recordV1Test(accountId, "production")
      const sent = yield* sentOf(deliveryId)
      const received = parseWebhookEvent(sent.body, sent.headers, SECRET)
      expect(received).toMatchObject({ event: "v1.report.completed", apiVersion: "v1", eventId: `evt_${deliveryId}` })
      if (received.event !== "v1.report.completed") throw new Error(received.event)
      expect(received.payload.report?.vehicle?.plate).toBe(received.payload.plate)
      expect(Object.keys(received.payload.report?.results ?? {}).sort()).toEqual(["fines", "gnc", "tax_debt", "vtv"])
    }))
})
