/**
 * The worker's activity adapters in Temporal's mock activity environment: typed failures become
 * ApplicationFailures with an explicit `nonRetryable`, defects stay retryable with a fixed message
 * (nothing internal leaves the worker), the activity context (attempt, cancellation) reaches the
 * Effect program, and every activity heartbeats while it runs.
 */
import { Context as ActivityContext } from "@temporalio/activity"
import { ApplicationFailure, CancelledFailure } from "@temporalio/common"
import { MockActivityEnvironment } from "@temporalio/testing"
import { DefaultLogger } from "@temporalio/worker"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { ModuleUnavailable } from "../../src/modules/Sources.js"
import { OperationActivities } from "../../src/operations/Activities.js"
import { SourceUnavailable } from "../../src/vehicles/Upstream.js"
import { DeliveryFailed } from "../../src/operations/DeliveryRuns.js"
import { ACTIVITY_TIMEOUTS } from "../../src/platform/sandboxSafe/ActivityTimeouts.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { createActivities, DEFECT_MESSAGE } from "../../worker/Activities.js"

const answered = { status: "completed" as const, data: { total: 0, items: [] }, error: null, warnings: [] }

/** Activities that behave as each test needs; only what the tests call is implemented. */
const fake = OperationActivities.of({
  markProcessing: () => Effect.sync(() => ActivityContext.current().info.attempt).pipe(Effect.asVoid),
  fetchModule: ({ module }) => {
    switch (module) {
      case "fines":
        return Effect.fail(new ModuleUnavailable({ message: "fines source down", retryable: true }))
      case "vtv":
        return Effect.fail(new ModuleUnavailable({ message: "plate unknown to the source", retryable: false }))
      case "tax_debt":
        return Effect.die(new Error("a bug: select * from accounts where id = $1"))
      case "gnc":
        return Effect.as(Effect.sleep("10 seconds"), answered)
    }
  },
  recordModule: () => Effect.void,
  finalizeOperation: () => Effect.void,
  finalizeReport: () => Effect.void,
  searchVehicle: () =>
    Effect.flatMap(Effect.sync(() => ActivityContext.current().info.attempt), (attempt) =>
      attempt < 3
        ? Effect.fail(new SourceUnavailable({ reason: `attempt ${attempt}` }))
        : Effect.succeed({ success: true as const, found: false, data: null })),
  finalizeVehicleSearch: () => Effect.void,
  emitEvent: ({ operationId }) => Effect.succeed(operationId === "op_hooked" ? "8f0c2d6e-5b1a-4c3e-9d7f-1a2b3c4d5e6f" : null),
  // the attempt the adapter passes is Temporal's; the fifth and last failure is final
  attemptDelivery: ({ attempt }) =>
    attempt === 2
      ? Effect.succeed("processed" as const)
      : Effect.fail(new DeliveryFailed({ message: `attempt ${attempt}: the endpoint answered 500`, retryable: attempt < 5 })),
  // long enough for a heartbeat to be due
  settleDelivery: () => Effect.sleep(ACTIVITY_TIMEOUTS.heartbeatMs / 3 + 300),
  finalizeLost: () => Effect.succeed(false)
})

const runtime = ManagedRuntime.make(Layer.succeed(OperationActivities, fake))
const activities = createActivities(runtime)
afterAll(() => runtime.dispose())

const environment = (attempt = 1) => new MockActivityEnvironment({ attempt }, { logger: new DefaultLogger("ERROR") })

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

describe("activity adapters", () => {
  it("a retryable typed failure is a retryable ApplicationFailure named by its tag", async () => {
    const error = await rejection(environment().run(activities.fetchModule, { operationId: "op_1", module: "fines" as const }))
    expect(error).toBeInstanceOf(ApplicationFailure)
    expect(error).toMatchObject({ type: "ModuleUnavailable", message: "fines source down", nonRetryable: false })
  })

  it("a typed failure that says it is not retryable is nonRetryable", async () => {
    const error = await rejection(environment().run(activities.fetchModule, { operationId: "op_1", module: "vtv" as const }))
    expect(error).toMatchObject({ type: "ModuleUnavailable", nonRetryable: true })
  })

  it("a defect is a retryable failure of type Defect, with a fixed message (the details stay in the worker's log)", async () => {
    const error = await rejection(environment().run(activities.fetchModule, { operationId: "op_1", module: "tax_debt" as const }))
    expect(error).toMatchObject({ type: "Defect", nonRetryable: false, message: DEFECT_MESSAGE })
    expect(JSON.stringify(error)).not.toContain("accounts")
    expect((error as ApplicationFailure).details ?? []).toEqual([])
  })

  it("an activity heartbeats while it runs (a dead worker is noticed within the heartbeat timeout)", async () => {
    const env = environment()
    let beats = 0
    env.on("heartbeat", () => beats++)
    await env.run(activities.settleDelivery, { deliveryId: "8f0c2d6e-5b1a-4c3e-9d7f-1a2b3c4d5e6f" })
    expect(beats).toBeGreaterThanOrEqual(1)
  }, 15_000)

  it("the attempt number reaches the program: the third attempt succeeds", async () => {
    const first = await rejection(environment(1).run(activities.searchVehicle, { operationId: "op_2" }))
    expect(first).toMatchObject({ type: "SourceUnavailable", message: "attempt 1", nonRetryable: false })
    await expect(environment(3).run(activities.searchVehicle, { operationId: "op_2" })).resolves.toEqual({
      success: true,
      found: false,
      data: null
    })
  })

  it("cancelling the activity interrupts the program and surfaces Temporal's cancellation", async () => {
    const env = environment()
    const running = env.run(activities.fetchModule, { operationId: "op_1", module: "gnc" as const })
    setImmediate(() => env.cancel())
    const error = await rejection(running)
    expect(error).toBeInstanceOf(CancelledFailure)
  })

  it("a delivery attempt is numbered by Temporal's attempt; the last failure is not retryable", async () => {
    const input = { deliveryId: "8f0c2d6e-5b1a-4c3e-9d7f-1a2b3c4d5e6f", policy: DELIVERY_RETRY }
    expect(await rejection(environment(1).run(activities.attemptDelivery, input))).toMatchObject({
      type: "DeliveryFailed",
      message: "attempt 1: the endpoint answered 500",
      nonRetryable: false
    })
    await expect(environment(2).run(activities.attemptDelivery, input)).resolves.toBe("processed")
    expect(await rejection(environment(5).run(activities.attemptDelivery, input))).toMatchObject({
      message: "attempt 5: the endpoint answered 500",
      nonRetryable: true
    })
  })

  it("the event step returns the delivery to start, or null without a webhook", async () => {
    await expect(environment().run(activities.emitEvent, { operationId: "op_hooked" })).resolves.toBe(
      "8f0c2d6e-5b1a-4c3e-9d7f-1a2b3c4d5e6f"
    )
    await expect(environment().run(activities.emitEvent, { operationId: "op_1" })).resolves.toBeNull()
  })

  it("success passes the value through", async () => {
    await expect(environment().run(activities.markProcessing, "op_1")).resolves.toBeUndefined()
  })
})
