/**
 * The Temporal engine's client side with a fake client: workflow types, ids, task queue and
 * input; an id already started counts as started; a failed start is left to the reconciler.
 */
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import { makeTemporalEngine, type WorkflowStarter } from "../../src/operations/TemporalEngine.js"
import { pgClientLayer } from "../../src/platform/Database.js"
import { freshDatabase } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"

const DatabaseLive = Layer.unwrapEffect(
  Effect.promise(freshDatabase).pipe(Effect.map((url) => pgClientLayer(Redacted.make(url), 4)))
)
const ServicesLive = Layer.mergeAll(OperationsRepo.Default, WebhooksRepo.Default, Accounts.Default).pipe(
  Layer.provideMerge(DatabaseLive),
  Layer.provideMerge(testConfig({ TEMPORAL_TASK_QUEUE: "vda-test", SOURCE_RETRY_INITIAL_MS: "300", WEBHOOK_RETRY_INITIAL_MS: "2000" }))
)

const DELIVERY_POLICY = { maximumAttempts: 5, initialIntervalMs: 2000, backoffCoefficient: 5, maximumIntervalMs: 7_200_000 }

interface Call {
  readonly workflowType: string
  readonly options: Parameters<WorkflowStarter["start"]>[1]
}

const recorder = (behaviour: (call: Call) => Promise<unknown>) => {
  const calls: Array<Call> = []
  const starter: WorkflowStarter = {
    start: (workflowType, options) => {
      calls.push({ workflowType, options })
      return behaviour({ workflowType, options })
    }
  }
  return { calls, starter }
}

const newOperation = (kind: "modules" | "vehicle", createdAt = new Date()) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ owner: "T", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
    const id = `op_${kind}_${Math.random().toString(36).slice(2, 10)}`
    yield* (yield* OperationsRepo).insert({
      id,
      accountId: account.id,
      environment: "sandbox",
      kind,
      plate: "AB123CD",
      modulesKey: kind === "modules" ? "fines+gnc" : null,
      input: kind === "modules" ? { kind, modules: ["fines", "gnc"] } : { kind, params: {}, requestId: "req_1" },
      createdAt
    }).pipe(Effect.orDie)
    return { id, accountId: account.id }
  })

const startedAt = (id: string) =>
  Effect.flatMap(OperationsRepo, (repo) => repo.find(id)).pipe(Effect.map((row) => Option.getOrThrow(row).startedAt))

layer(ServicesLive, { excludeTestServices: true })("Temporal engine", (it) => {
  it.effect("starts a modules workflow with a readable id, the task queue and the configured retry policy", () =>
    Effect.gen(function*() {
      const { calls, starter } = recorder(async () => ({}))
      const engine = yield* makeTemporalEngine(starter)
      const { accountId, id } = yield* newOperation("modules")
      yield* engine.start({ kind: "modules", operationId: id, accountId, environment: "sandbox", plate: "AB123CD", modules: ["fines", "gnc"] })
      expect(calls).toEqual([{
        workflowType: "modulesOperation",
        options: {
          taskQueue: "vda-test",
          workflowId: `modules/sandbox/${accountId}/AB123CD/fines+gnc/${id}`,
          args: [{
            operationId: id,
            modules: ["fines", "gnc"],
            retry: { maximumAttempts: 3, initialIntervalMs: 300, backoffCoefficient: 2, maximumIntervalMs: 10_000 },
            deliveryRetry: DELIVERY_POLICY
          }]
        }
      }])
      expect(yield* startedAt(id)).toBeInstanceOf(Date)
    }))

  it.effect("a vehicle search; an id already started counts as started", () =>
    Effect.gen(function*() {
      const { calls, starter } = recorder(async (call) => {
        throw new WorkflowExecutionAlreadyStartedError("already", call.options.workflowId, call.workflowType)
      })
      const engine = yield* makeTemporalEngine(starter)
      const { accountId, id } = yield* newOperation("vehicle")
      yield* engine.start({ kind: "vehicle", operationId: id, accountId, environment: "sandbox", plate: "AB123CD" })
      expect(calls[0]).toMatchObject({
        workflowType: "vehicleSearch",
        options: { workflowId: `vehicle/sandbox/${accountId}/AB123CD/${id}` }
      })
      expect(yield* startedAt(id)).toBeInstanceOf(Date)
    }))

  it.effect("a start that fails leaves the operation to the reconciler, which starts it later", () =>
    Effect.gen(function*() {
      let reachable = false
      const { calls, starter } = recorder(async () => {
        if (!reachable) throw new Error("connection refused")
        return {}
      })
      const engine = yield* makeTemporalEngine(starter)
      const { accountId, id } = yield* newOperation("modules", new Date(Date.now() - 60_000))
      yield* engine.start({ kind: "modules", operationId: id, accountId, environment: "sandbox", plate: "AB123CD", modules: ["fines", "gnc"] })
      expect(yield* startedAt(id)).toBeNull()
      reachable = true
      yield* engine.reconcile
      expect(calls.filter((c) => c.options.workflowId.endsWith(id))).toHaveLength(2)
      expect(yield* startedAt(id)).toBeInstanceOf(Date)
    }))

  const newDelivery = (createdAt: Date) =>
    Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ owner: "T", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
      return yield* (yield* WebhooksRepo).insertDelivery({
        id: crypto.randomUUID(),
        accountId: account.id,
        environment: "production",
        apiVersion: "v2",
        eventType: "webhook.test",
        operationId: null,
        body: "{}",
        createdAt
      })
    })

  const deliveryStartedAt = (id: string) =>
    Effect.flatMap(WebhooksRepo, (repo) => repo.findDelivery(id)).pipe(Effect.map((row) => Option.getOrThrow(row).startedAt))

  it.effect("starts a delivery workflow by its readable id with the delivery policy, never reusing the id", () =>
    Effect.gen(function*() {
      const { calls, starter } = recorder(async () => ({}))
      const engine = yield* makeTemporalEngine(starter)
      const id = yield* newDelivery(new Date())
      yield* engine.startDelivery(id)
      expect(calls).toEqual([{
        workflowType: "webhookDelivery",
        options: {
          taskQueue: "vda-test",
          workflowId: `webhook-delivery/${id}`,
          args: [{ deliveryId: id, retry: DELIVERY_POLICY }],
          workflowIdReusePolicy: "REJECT_DUPLICATE"
        }
      }])
      expect(yield* deliveryStartedAt(id)).toBeInstanceOf(Date)
    }))

  it.effect("the reconciler starts pending deliveries nobody started, after a grace period", () =>
    Effect.gen(function*() {
      const { calls, starter } = recorder(async () => ({}))
      const engine = yield* makeTemporalEngine(starter)
      const old = yield* newDelivery(new Date(Date.now() - 60_000))
      const fresh = yield* newDelivery(new Date())
      yield* engine.reconcile
      const started = calls.filter((c) => c.workflowType === "webhookDelivery").map((c) => c.options.workflowId)
      expect(started).toContain(`webhook-delivery/${old}`)
      expect(started).not.toContain(`webhook-delivery/${fresh}`)
      expect(yield* deliveryStartedAt(old)).toBeInstanceOf(Date)
      expect(yield* deliveryStartedAt(fresh)).toBeNull()
    }))
})
