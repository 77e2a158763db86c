/**
 * The Temporal engine's client side on the fake Temporal (`TemporalGateway.Test`): what each start
 * asks of Temporal (type, id without the plate, task queues, input, search attributes, memo,
 * summary); the start deadline;
 * and the reconciler: unstarted work started, vanished workflows restarted, closed ones finalised
 * with a stable retryable error and their event sent, overdue deliveries settled or restarted,
 * each attempt series of a resent delivery under its own workflow id.
 */
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ActivitiesLive } from "../../src/ActivitiesLive.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { makeTemporalEngine, TemporalGateway, TemporalRecords, type WorkflowStart } from "../../src/operations/TemporalEngine.js"
import { deliveryStartRequestOf } from "../../src/operations/WorkflowEngine.js"
import { plateHash } from "../../src/platform/ids/PlateHash.js"
import { temporalSecretsLayer } from "../../src/platform/temporal/TemporalSecrets.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import { insertOperation } from "../support/Operations.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"

const SALT = "engine-test-salt"
const PLATE = "AB123CD"
const HASH = plateHash(Redacted.make(SALT), PLATE)

const ServicesLive = Layer.mergeAll(ActivitiesLive, Accounts.layer).pipe(
  Layer.provideMerge(freshDatabaseLayer(4)),
  Layer.provideMerge(temporalSecretsLayer("api")),
  Layer.provideMerge(testConfig({
    TEMPORAL_TASK_QUEUE: "vda-test",
    TEMPORAL_START_TIMEOUT_MS: "300",
    TEMPORAL_STALE_AFTER_MS: "1000",
    PLATE_HASH_SALT: SALT,
    TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS,
    SOURCE_RETRY_INITIAL_MS: "300",
    WEBHOOK_RETRY_INITIAL_MS: "2000",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true"
  }))
)

const DELIVERY_POLICY = { maximumAttempts: 5, initialIntervalMs: 2000, backoffCoefficient: 5, maximumIntervalMs: 7_200_000 }
const SOURCE_POLICY = { maximumAttempts: 3, initialIntervalMs: 300, backoffCoefficient: 2, maximumIntervalMs: 10_000 }

/** The engine on a fake Temporal that answers starts as `onStart` says, with what it records. */
const fakeEngine = (onStart?: (start: WorkflowStart, signal: AbortSignal) => Promise<unknown>) =>
  Effect.gen(function*() {
    return { temporal: yield* TemporalRecords, engine: yield* makeTemporalEngine }
  }).pipe(Effect.provide(TemporalGateway.Test(onStart)))

const attributes = (start: WorkflowStart) => Object.fromEntries(start.typedSearchAttributes.map((p) => [p.key.name, p.value]))

const newAccount = Effect.flatMap(Accounts, (accounts) =>
  accounts.create({ owner: "T", plan: "growth", timezone: "America/Argentina/Buenos_Aires" }))

const newOperation = (kind: "modules" | "vehicle" | "report", createdAt = new Date()) =>
  Effect.gen(function*() {
    const account = yield* newAccount
    const id = `op_${kind}_${Math.random().toString(36).slice(2, 10)}`
    yield* insertOperation({
      id,
      accountId: account.id,
      environment: "sandbox",
      kind,
      apiVersion: kind === "report" ? "v1" : "v2",
      plate: PLATE,
      modulesKey: kind === "modules" ? "fines+gnc" : null,
      input: kind === "vehicle" ? { kind, params: {}, requestId: "req_1" } : { kind, modules: ["fines", "gnc"] },
      createdAt
    }).pipe(Effect.orDie)
    return { id, accountId: account.id }
  })

/** An operation started a while ago that has not moved since (its workflow may be gone). */
const staleOperation = (kind: "modules" | "vehicle" | "report") =>
  Effect.gen(function*() {
    const longAgo = new Date(Date.now() - 60_000)
    const created = yield* newOperation(kind, longAgo)
    yield* (yield* OperationsRepo).markStarted(created.id, longAgo)
    return created
  })

const operation = (id: string) => Effect.flatMap(OperationsRepo, (repo) => repo.find(id)).pipe(Effect.map(Option.getOrThrow))
const moduleRows = (id: string) => Effect.flatMap(OperationsRepo, (repo) => repo.modules(id))

const newDelivery = (createdAt: Date, accountId?: string) =>
  Effect.gen(function*() {
    const account = accountId ?? (yield* newAccount).id
    return yield* (yield* WebhooksRepo).insertDelivery({
      id: crypto.randomUUID(),
      accountId: account,
      environment: "production",
      apiVersion: "v2",
      eventType: "webhook.test",
      operationId: null,
      body: "{}",
      sendsWhenDisabled: false,
      createdAt
    })
  })

const delivery = (id: string) => Effect.flatMap(WebhooksRepo, (repo) => repo.findDelivery(id)).pipe(Effect.map(Option.getOrThrow))

/** Ends the delivery's current series (`failed`) and resends it: the row of its next series. */
const resent = (id: string, accountId: string, at = new Date()) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const current = yield* delivery(id)
    yield* repo.settle(id, current.series, "test: the series ended", at)
    return Option.getOrThrow(yield* repo.resend(id, accountId, "production", at))
  })

const enableWebhook = (accountId: string) =>
  Effect.flatMap(WebhooksRepo, (repo) =>
    repo.updateConfig(accountId, "sandbox", "whsec_test", new Date(), (current) =>
      Effect.succeed({ ...current, url: "https://127.0.0.1:9/hook", enabled: true })))

layer(ServicesLive, { excludeTestServices: true })("Temporal engine", (it) => {
  it.effect("starts a modules workflow on the operations queue, labelled for operators, without the plate", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* newOperation("modules")
      yield* engine.start({ kind: "modules", operationId: id, accountId, environment: "sandbox", plate: PLATE, modules: ["fines", "gnc"] })
      expect(temporal.starts).toHaveLength(1)
      const start = temporal.starts[0]!
      expect(start).toMatchObject({
        workflowType: "modulesOperation",
        taskQueue: "vda-test-operations",
        workflowId: `modules/sandbox/${accountId}/${HASH}/fines+gnc/${id}`,
        args: [{
          operationId: id,
          modules: ["fines", "gnc"],
          retry: SOURCE_POLICY,
          deliveryRetry: DELIVERY_POLICY,
          deliveryTaskQueue: "vda-test-deliveries"
        }],
        memo: { subject: id, accountId, environment: "sandbox", kind: "modules", modules: "fines+gnc", plateHash: HASH },
        staticSummary: `modules · fines+gnc · sandbox · ${accountId} · ${id}`
      })
      expect(attributes(start)).toEqual({
        VdaAccountId: accountId,
        VdaEnvironment: "sandbox",
        VdaKind: "modules",
        VdaModules: "fines+gnc",
        VdaPlateHash: HASH
      })
      expect(JSON.stringify(start)).not.toContain(PLATE)
      expect((yield* operation(id)).startedAt).toBeInstanceOf(Date)
    }))

  it.effect("a v1 report: its own workflow type and id, labelled with its modules, without the plate", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* newOperation("report")
      yield* engine.start({ kind: "report", operationId: id, accountId, environment: "sandbox", plate: PLATE, modules: ["fines", "gnc"] })
      expect(temporal.starts[0]).toMatchObject({
        workflowType: "report",
        taskQueue: "vda-test-operations",
        workflowId: `report/sandbox/${accountId}/${HASH}/${id}`,
        args: [{ operationId: id, modules: ["fines", "gnc"], retry: SOURCE_POLICY, deliveryRetry: DELIVERY_POLICY }]
      })
      expect(attributes(temporal.starts[0]!)).toMatchObject({ VdaKind: "report", VdaModules: "fines+gnc", VdaPlateHash: HASH })
      expect(JSON.stringify(temporal.starts[0])).not.toContain(PLATE)
    }))

  it.effect("a vehicle search; an id already started counts as started", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine(async (start) => {
        throw new WorkflowExecutionAlreadyStartedError("already", start.workflowId, start.workflowType)
      })
      const { accountId, id } = yield* newOperation("vehicle")
      yield* engine.start({ kind: "vehicle", operationId: id, accountId, environment: "sandbox", plate: PLATE })
      expect(temporal.starts[0]).toMatchObject({
        workflowType: "vehicleSearch",
        taskQueue: "vda-test-operations",
        workflowId: `vehicle/sandbox/${accountId}/${HASH}/${id}`
      })
      expect(attributes(temporal.starts[0]!)).toMatchObject({ VdaKind: "vehicle", VdaPlateHash: HASH })
      expect(attributes(temporal.starts[0]!)).not.toHaveProperty("VdaModules")
      expect((yield* operation(id)).startedAt).toBeInstanceOf(Date)
    }))

  it.effect("a start that never answers is given up after the deadline (its call aborted); the reconciler starts it later", () =>
    Effect.gen(function*() {
      // the test's clock, at the wall clock's time (the rows are written in it): the deadline passes when the test says
      yield* TestClock.setTime(Date.now())
      let reachable = false
      const signals: Array<AbortSignal> = []
      const { engine, temporal } = yield* fakeEngine((_, signal) => {
        signals.push(signal)
        return reachable ? Promise.resolve({}) : new Promise(() => {}) // hangs for ever
      })
      const { accountId, id } = yield* newOperation("modules", new Date(Date.now() - 60_000))
      const starting = yield* Effect.forkChild(
        engine.start({ kind: "modules", operationId: id, accountId, environment: "sandbox", plate: PLATE, modules: ["fines", "gnc"] })
      )
      while (signals.length === 0) yield* Effect.yieldNow
      yield* TestClock.adjust("299 millis")
      expect(signals[0]!.aborted).toBe(false) // still within the deadline (TEMPORAL_START_TIMEOUT_MS=300)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(starting) // given up: a warning, no failure
      expect(signals[0]!.aborted).toBe(true)
      expect((yield* operation(id)).startedAt).toBeNull()
      reachable = true
      const found = yield* engine.reconcile
      expect(found.started).toBeGreaterThanOrEqual(1)
      expect(temporal.starts.filter((s) => s.workflowId.endsWith(id))).toHaveLength(2)
      expect((yield* operation(id)).startedAt).toBeInstanceOf(Date)
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("starts a delivery on the deliveries queue by its id, never reusing the id, labelled with its account", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const account = yield* newAccount
      const id = yield* newDelivery(new Date(), account.id)
      yield* engine.startDelivery({ deliveryId: id, series: 1, accountId: account.id, environment: "production" })
      expect(temporal.starts[0]).toMatchObject({
        workflowType: "webhookDelivery",
        taskQueue: "vda-test-deliveries",
        workflowId: `webhook-delivery/${id}`,
        args: [{ deliveryId: id, series: 1, retry: DELIVERY_POLICY }],
        workflowIdReusePolicy: "REJECT_DUPLICATE"
      })
      expect(attributes(temporal.starts[0]!)).toEqual({ VdaAccountId: account.id, VdaEnvironment: "production", VdaKind: "delivery" })
      expect((yield* delivery(id)).startedAt).toBeInstanceOf(Date)
    }))

  it.effect("a resent delivery's series runs under a workflow id of its own; the first series keeps the plain id", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const account = yield* newAccount
      const id = yield* newDelivery(new Date(), account.id)
      yield* engine.startDelivery(deliveryStartRequestOf(yield* delivery(id)))
      const second = yield* resent(id, account.id)
      expect(second.series).toBe(2)
      yield* engine.startDelivery(deliveryStartRequestOf(second))
      const third = yield* resent(id, account.id)
      yield* engine.startDelivery(deliveryStartRequestOf(third))
      expect(temporal.starts.map((s) => s.workflowId)).toEqual([
        `webhook-delivery/${id}`,
        `webhook-delivery/${id}-series-2`,
        `webhook-delivery/${id}-series-3`
      ])
      expect(temporal.starts[1]).toMatchObject({
        workflowType: "webhookDelivery",
        taskQueue: "vda-test-deliveries",
        args: [{ deliveryId: id, series: 2, retry: DELIVERY_POLICY }],
        workflowIdReusePolicy: "REJECT_DUPLICATE"
      })
      expect(attributes(temporal.starts[1]!)).toEqual({ VdaAccountId: account.id, VdaEnvironment: "production", VdaKind: "delivery" })
      expect((yield* delivery(id)).startedAt).toBeInstanceOf(Date)
    }))

  it.effect("the reconciler starts pending deliveries nobody started, after a grace period", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const old = yield* newDelivery(new Date(Date.now() - 60_000))
      const fresh = yield* newDelivery(new Date())
      yield* engine.reconcile
      const started = temporal.starts.filter((s) => s.workflowType === "webhookDelivery").map((s) => s.workflowId)
      expect(started).toContain(`webhook-delivery/${old}`)
      expect(started).not.toContain(`webhook-delivery/${fresh}`)
      expect((yield* delivery(old)).startedAt).toBeInstanceOf(Date)
      expect((yield* delivery(fresh)).startedAt).toBeNull()
    }))

  it.effect("a stale operation whose workflow still runs is left alone", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { id } = yield* staleOperation("modules")
      yield* engine.reconcile
      expect(temporal.described.some((w) => w.endsWith(id))).toBe(true)
      expect(temporal.starts.filter((s) => s.workflowId.endsWith(id))).toHaveLength(0)
      expect((yield* operation(id)).status).toBe("queued")
    }))

  it.effect("a workflow the server no longer knows is started again under the same id, its search attributes registered first", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* staleOperation("modules")
      const workflowId = `modules/sandbox/${accountId}/${HASH}/fines+gnc/${id}`
      temporal.states.set(workflowId, "missing")
      const found = yield* engine.reconcile
      expect(found.restarted).toBeGreaterThanOrEqual(1)
      expect(temporal.starts.map((s) => s.workflowId)).toContain(workflowId)
      // a server that lost the workflow lost the attributes too: registered once per pass, before any start
      expect(temporal.calls.filter((call) => call === "register")).toHaveLength(1)
      expect(temporal.calls.indexOf("register")).toBeLessThan(temporal.calls.indexOf(`start ${workflowId}`))
      yield* engine.reconcile
      expect(temporal.calls.filter((call) => call === "register")).toHaveLength(2)
    }))

  it.effect("a workflow that closed without finishing its operation: modules fail retryably with our message, the event goes out", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* staleOperation("modules")
      yield* enableWebhook(accountId)
      temporal.states.set(`modules/sandbox/${accountId}/${HASH}/fines+gnc/${id}`, "closed")
      const found = yield* engine.reconcile
      expect(found.finalized).toBeGreaterThanOrEqual(1)
      expect((yield* operation(id)).status).toBe("failed")
      const modules = yield* moduleRows(id)
      expect(modules.map((m) => [m.module, m.status, m.error]).sort()).toEqual([
        ["fines", "failed", { code: "module_unavailable", message: "fines source unavailable", retryable: true }],
        ["gnc", "failed", { code: "module_unavailable", message: "GNC source unavailable", retryable: true }]
      ])
      const deliveryStart = temporal.starts.find((s) => s.workflowType === "webhookDelivery")
      expect(deliveryStart).toBeDefined()
      expect(attributes(deliveryStart!)).toMatchObject({ VdaAccountId: accountId, VdaEnvironment: "sandbox" })
      const deliveryId = deliveryStart!.workflowId.replace("webhook-delivery/", "")
      const sent = JSON.parse((yield* delivery(deliveryId)).body)
      expect(sent).toMatchObject({ type: "modules.failed", data: { id, status: "failed" } })
      // a second pass finds nothing more to do
      const again = yield* engine.reconcile
      expect(again.finalized).toBe(0)
    }))

  it.effect("a lost report: its vehicle and modules fail retryably with our messages, a v1 report.failed event goes out", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* staleOperation("report")
      yield* enableWebhook(accountId)
      temporal.states.set(`report/sandbox/${accountId}/${HASH}/${id}`, "closed")
      yield* engine.reconcile
      const row = yield* operation(id)
      expect(row.status).toBe("failed")
      expect(row.result).toEqual({ ok: false, error: { code: "temporarily_unavailable", message: "vehicle source unavailable", retryable: true } })
      expect((yield* moduleRows(id)).map((m) => m.status)).toEqual(["failed", "failed"])
      const deliveryStart = temporal.starts.find((s) => s.workflowType === "webhookDelivery")!
      const sent = JSON.parse((yield* delivery(deliveryStart.workflowId.replace("webhook-delivery/", ""))).body)
      expect(sent).toMatchObject({ event: "report.failed", id, status: "failed", report: { vehicle: null, digest: { alerts: ["module_unavailable"] } } })
    }))

  it.effect("a module already answered keeps its answer: the lost operation ends partial", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* staleOperation("modules")
      const repo = yield* OperationsRepo
      const longAgo = new Date(Date.now() - 60_000)
      yield* repo.recordModule(id, "fines", { status: "completed", data: { total: 0, items: [] }, error: null, warnings: [] }, longAgo)
      temporal.states.set(`modules/sandbox/${accountId}/${HASH}/fines+gnc/${id}`, "closed")
      yield* engine.reconcile
      expect((yield* operation(id)).status).toBe("partial")
      const fines = (yield* moduleRows(id)).find((m) => m.module === "fines")!
      expect(fines).toMatchObject({ status: "completed", data: { total: 0, items: [] } })
    }))

  it.effect("a lost vehicle search ends failed with the vehicle source's stable message", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const { accountId, id } = yield* staleOperation("vehicle")
      temporal.states.set(`vehicle/sandbox/${accountId}/${HASH}/${id}`, "closed")
      yield* engine.reconcile
      const row = yield* operation(id)
      expect(row.status).toBe("failed")
      expect(row.result).toEqual({
        ok: false,
        error: { code: "temporarily_unavailable", message: "vehicle source unavailable", retryable: true }
      })
    }))

  it.effect("an overdue delivery: closed without settling → failed; unknown to the server → started again", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const repo = yield* WebhooksRepo
      const longAgo = new Date(Date.now() - 60_000)
      const closed = yield* newDelivery(longAgo)
      const missing = yield* newDelivery(longAgo)
      yield* repo.markStarted(closed, longAgo)
      yield* repo.markStarted(missing, longAgo)
      temporal.states.set(`webhook-delivery/${closed}`, "closed")
      temporal.states.set(`webhook-delivery/${missing}`, "missing")
      yield* engine.reconcile
      expect((yield* delivery(closed)).status).toBe("failed")
      expect((yield* delivery(missing)).status).toBe("pending")
      expect(temporal.starts.map((s) => s.workflowId)).toContain(`webhook-delivery/${missing}`)
      expect(temporal.starts.map((s) => s.workflowId)).not.toContain(`webhook-delivery/${closed}`)
    }))

  it.effect("an overdue resent delivery: the reconciler describes its series' workflow, restarting or settling that series", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const repo = yield* WebhooksRepo
      const longAgo = new Date(Date.now() - 60_000)
      const account = yield* newAccount
      const [missing, closed] = [yield* newDelivery(longAgo, account.id), yield* newDelivery(longAgo, account.id)]
      for (const id of [missing, closed]) {
        yield* resent(id, account.id, longAgo)
        yield* repo.markStarted(id, longAgo)
      }
      // the first series' workflows are long closed; only the second series' matter now
      temporal.states.set(`webhook-delivery/${missing}`, "closed")
      temporal.states.set(`webhook-delivery/${closed}`, "closed")
      temporal.states.set(`webhook-delivery/${missing}-series-2`, "missing")
      temporal.states.set(`webhook-delivery/${closed}-series-2`, "closed")
      const found = yield* engine.reconcile
      expect(found.restarted).toBeGreaterThanOrEqual(1)
      expect(found.finalized).toBeGreaterThanOrEqual(1)
      expect(temporal.described).toEqual(expect.arrayContaining([`webhook-delivery/${missing}-series-2`, `webhook-delivery/${closed}-series-2`]))
      expect(temporal.described).not.toContain(`webhook-delivery/${missing}`)
      expect(temporal.described).not.toContain(`webhook-delivery/${closed}`)
      const ours = temporal.starts.map((s) => s.workflowId).filter((w) => w.includes(missing) || w.includes(closed))
      expect(ours).toEqual([`webhook-delivery/${missing}-series-2`])
      expect(yield* delivery(missing)).toMatchObject({ status: "pending", series: 2 })
      expect(yield* delivery(closed)).toMatchObject({ status: "failed", series: 2, lastError: "the delivery's workflow ended without settling it" })
    }))

  it.effect("a resent delivery whose start was lost is started by the reconciler under its series' id", () =>
    Effect.gen(function*() {
      const { engine, temporal } = yield* fakeEngine()
      const account = yield* newAccount
      const id = yield* newDelivery(new Date(Date.now() - 60_000), account.id)
      yield* resent(id, account.id)
      expect((yield* delivery(id)).startedAt).toBeNull()
      yield* engine.reconcile
      expect(temporal.starts.map((s) => s.workflowId)).toContain(`webhook-delivery/${id}-series-2`)
      expect(temporal.starts.map((s) => s.workflowId)).not.toContain(`webhook-delivery/${id}`)
      expect((yield* delivery(id)).startedAt).toBeInstanceOf(Date)
    }))

  it.effect("a pass while Temporal is unreachable changes nothing and does not fail", () =>
    Effect.gen(function*() {
      const unreachable = () => Promise.reject(new Error("UNAVAILABLE: connection refused"))
      const engine = yield* makeTemporalEngine.pipe(Effect.provideService(TemporalGateway, {
        start: unreachable,
        describe: unreachable,
        registerSearchAttributes: unreachable,
        ping: unreachable
      }))
      const { id } = yield* staleOperation("modules")
      const found = yield* engine.reconcile
      expect(found).toEqual({ started: 0, restarted: 0, finalized: 0, reachable: false })
      expect((yield* operation(id)).status).toBe("queued")
    }))
})
