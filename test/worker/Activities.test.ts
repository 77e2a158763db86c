/**
 * The worker's activity adapters in Temporal's mock activity environment, over the real activities
 * (canned production sources and webhook endpoint, the sandbox's generators, a fresh database):
 * typed failures become ApplicationFailures with an explicit `nonRetryable`, defects stay
 * retryable with a fixed message (nothing internal leaves the worker), the activity context
 * (attempt, cancellation) reaches the Effect program, and every activity heartbeats while it runs.
 */
import { expect, layer } from "@effect/vitest"
import { ApplicationFailure, CancelledFailure } from "@temporalio/common"
import { MockActivityEnvironment } from "@temporalio/testing"
import { DefaultLogger } from "@temporalio/worker"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ActivitiesTest } from "../../src/ActivitiesLive.js"
import { ModuleUnavailable } from "../../src/modules/Sources.js"
import { DeliveryRuns } from "../../src/operations/DeliveryRuns.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { ACTIVITY_TIMEOUTS } from "../../src/platform/sandboxSafe/ActivityTimeouts.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { SourceUnavailable } from "../../src/vehicles/Upstream.js"
import { DEFECT_MESSAGE } from "../../worker/Activities.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"
import { deliveryTo, insertOperation, newAccount, rejection, WorkerActivities, webhookTo } from "../support/WorkerActivities.js"

const DOWN_PLATE = "AB100CD"
/** The sandbox's default scenario: every module answers, after the simulated latency. */
const SANDBOX_PLATE = "AB123CD"
/** Long enough for a heartbeat to be due while a sandbox module is looked up. */
const SANDBOX_LATENCY_MS = Math.ceil(ACTIVITY_TIMEOUTS.heartbeatMs / 3) + 300

/** Production's fines source is down, its vtv source does not know the plates; endpoints ending in /down answer 500. */
const Services = WorkerActivities.layer.pipe(
  Layer.provideMerge(ActivitiesTest({
    modules: {
      fines: new ModuleUnavailable({ message: "fines source down", retryable: true }),
      vtv: new ModuleUnavailable({ message: "plate unknown to the source", retryable: false })
    },
    vehicles: { [DOWN_PLATE]: new SourceUnavailable({ reason: "the registry is down" }) },
    webhooks: (outgoing) => ({ _tag: "Answered", status: outgoing.url.endsWith("/down") ? 500 : 200 })
  })),
  Layer.provideMerge(Accounts.layer),
  Layer.provideMerge(freshDatabaseLayer(2)),
  Layer.provideMerge(testConfig({ SANDBOX_MODULE_LATENCY_MS: String(SANDBOX_LATENCY_MS) }))
)

const environment = (attempt = 1) => new MockActivityEnvironment({ attempt }, { logger: new DefaultLogger("ERROR") })

const modulesOperation = (environment: "production" | "sandbox", plate = "AB200CD") =>
  Effect.flatMap(newAccount, (accountId) => insertOperation(accountId, environment, plate, { kind: "modules", modules: ["fines", "vtv"] }))

const operationRow = (id: string) => Effect.flatMap(OperationsRepo, (repo) => repo.find(id)).pipe(Effect.map(Option.getOrThrow))

const deliveryRow = (id: string) =>
  Effect.flatMap(DeliveryRuns, (deliveries) => deliveries.find(id)).pipe(Effect.map(Option.getOrThrow))

// the activities run on the worker's runtime and the real clock: no test services
layer(Services, { excludeTestServices: true })("activity adapters", (it) => {
  it.effect("a retryable typed failure is a retryable ApplicationFailure named by its tag", () =>
    Effect.gen(function*() {
      const { fetchModule } = yield* WorkerActivities
      const operationId = yield* modulesOperation("production")
      const error = yield* rejection(() => environment().run(fetchModule, { operationId, module: "fines" as const }))
      expect(error).toBeInstanceOf(ApplicationFailure)
      expect(error).toMatchObject({ type: "ModuleUnavailable", message: "fines source down", nonRetryable: false })
    }))

  it.effect("a typed failure that says it is not retryable is nonRetryable", () =>
    Effect.gen(function*() {
      const { fetchModule } = yield* WorkerActivities
      const operationId = yield* modulesOperation("production")
      const error = yield* rejection(() => environment().run(fetchModule, { operationId, module: "vtv" as const }))
      expect(error).toMatchObject({ type: "ModuleUnavailable", message: "plate unknown to the source", nonRetryable: true })
    }))

  it.effect("a defect is a retryable failure of type Defect, with a fixed message (the details stay in the worker's log)", () =>
    Effect.gen(function*() {
      const { fetchModule } = yield* WorkerActivities
      const operationId = yield* modulesOperation("production")
      // a row the database accepts and the operation's schema does not: reading it is a defect
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`update operations set input = ${JSON.stringify({ kind: "modules", modules: ["planted-value"] })} where id = ${operationId}`)
      const error = yield* rejection(() => environment().run(fetchModule, { operationId, module: "fines" as const }))
      expect(error).toMatchObject({ type: "Defect", nonRetryable: false, message: DEFECT_MESSAGE })
      expect(JSON.stringify(error)).not.toMatch(/planted-value|MalformedRow|schema|operations/)
      expect((error as ApplicationFailure).details ?? []).toEqual([])
    }))

  it.effect("an activity heartbeats while it runs (a dead worker is noticed within the heartbeat timeout)", () =>
    Effect.gen(function*() {
      const { fetchModule } = yield* WorkerActivities
      const operationId = yield* modulesOperation("sandbox", SANDBOX_PLATE)
      const env = environment()
      let beats = 0
      env.on("heartbeat", () => beats++)
      const outcome = yield* Effect.promise(() => env.run(fetchModule, { operationId, module: "fines" as const }))
      expect(outcome).toMatchObject({ status: "completed", error: null })
      expect(beats).toBeGreaterThanOrEqual(1)
    }), 15_000)

  it.effect("a source that is down is a retryable failure named by its tag; a plate found nowhere is an answer", () =>
    Effect.gen(function*() {
      const { searchVehicle } = yield* WorkerActivities
      const accountId = yield* newAccount
      const search = (plate: string) => insertOperation(accountId, "production", plate, { kind: "vehicle", params: {}, requestId: "req_worker" })
      const down = yield* search(DOWN_PLATE)
      expect(yield* rejection(() => environment().run(searchVehicle, { operationId: down }))).toMatchObject({
        type: "SourceUnavailable",
        message: "the registry is down",
        nonRetryable: false
      })
      const nowhere = yield* search("AB300CD")
      expect(yield* Effect.promise(() => environment().run(searchVehicle, { operationId: nowhere }))).toMatchObject({
        success: true,
        found: false,
        data: null
      })
    }))

  it.effect("cancelling the activity interrupts the program and surfaces Temporal's cancellation", () =>
    Effect.gen(function*() {
      const { fetchModule } = yield* WorkerActivities
      const operationId = yield* modulesOperation("sandbox", SANDBOX_PLATE)
      const env = environment()
      const running = env.run(fetchModule, { operationId, module: "gnc" as const })
      setImmediate(() => env.cancel())
      const error = yield* rejection(() => running)
      expect(error).toBeInstanceOf(CancelledFailure)
    }))

  it.effect("a delivery attempt is numbered by Temporal's attempt; the last failure is not retryable", () =>
    Effect.gen(function*() {
      const { attemptDelivery } = yield* WorkerActivities
      const failing = yield* Effect.flatMap(newAccount, (accountId) => deliveryTo(accountId, "https://hooks.example.com/down"))
      const attempt = (number: number, deliveryId: string) =>
        Effect.promise(() => environment(number).run(attemptDelivery, { deliveryId, policy: DELIVERY_RETRY }))
      const failedAttempt = (number: number, deliveryId: string) =>
        rejection(() => environment(number).run(attemptDelivery, { deliveryId, policy: DELIVERY_RETRY }))

      expect(yield* failedAttempt(1, failing)).toMatchObject({
        type: "DeliveryFailed",
        message: "the endpoint answered 500",
        nonRetryable: false
      })
      expect(yield* deliveryRow(failing)).toMatchObject({ status: "pending", attempts: 1 })
      expect(yield* failedAttempt(5, failing)).toMatchObject({
        type: "DeliveryFailed",
        message: "the endpoint answered 500",
        nonRetryable: true
      })
      expect(yield* deliveryRow(failing)).toMatchObject({ status: "failed", attempts: 5 })

      const taken = yield* Effect.flatMap(newAccount, (accountId) => deliveryTo(accountId, "https://hooks.example.com/up"))
      expect(yield* attempt(2, taken)).toBe("processed")
      expect(yield* deliveryRow(taken)).toMatchObject({ status: "processed", attempts: 2 })
    }))

  it.effect("the event step returns the delivery to start, or null without a webhook", () =>
    Effect.gen(function*() {
      const { emitEvent } = yield* WorkerActivities
      const repo = yield* OperationsRepo
      const finalOperation = (accountId: string) =>
        Effect.tap(insertOperation(accountId, "production", "AB400CD", { kind: "modules", modules: ["fines"] }), (id) =>
          repo.finalize(id, "failed", new Date()))

      const hooked = yield* newAccount
      yield* webhookTo(hooked, "https://hooks.example.com/up")
      const operationId = yield* finalOperation(hooked)
      const deliveryId = yield* Effect.promise(() => environment().run(emitEvent, { operationId }))
      expect(deliveryId).toEqual(expect.any(String))
      expect(yield* deliveryRow(String(deliveryId))).toMatchObject({ accountId: hooked, environment: "production", status: "pending" })

      const unhooked = yield* Effect.flatMap(newAccount, finalOperation)
      expect(yield* Effect.promise(() => environment().run(emitEvent, { operationId: unhooked }))).toBeNull()
    }))

  it.effect("success passes the value through", () =>
    Effect.gen(function*() {
      const { markProcessing } = yield* WorkerActivities
      const operationId = yield* modulesOperation("production")
      expect(yield* Effect.promise(() => environment().run(markProcessing, operationId))).toBeUndefined()
      expect((yield* operationRow(operationId)).status).toBe("processing")
    }))
})
