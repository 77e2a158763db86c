/**
 * The Temporal bindings' branching, with the workflow SDK mocked: which policies the activities
 * get, and how an activity failure becomes a module's error. (Replay covers the real sandbox.)
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from "@temporalio/common"
import { beforeEach, describe, expect, it, vi } from "vitest"

const m = vi.hoisted(() => ({
  activities: {
    markProcessing: vi.fn(),
    fetchModule: vi.fn(),
    recordModule: vi.fn(),
    finalizeOperation: vi.fn(),
    searchVehicle: vi.fn(),
    finalizeVehicleSearch: vi.fn(),
    emitEvent: vi.fn(),
    attemptDelivery: vi.fn()
  },
  startChild: vi.fn(),
  options: [] as Array<Record<string, any>>
}))

vi.mock("@temporalio/workflow", async (importOriginal) => {
  const real = await importOriginal<typeof import("@temporalio/workflow")>()
  return {
    ...real,
    proxyActivities: vi.fn((options: Record<string, any>) => {
      real.proxyActivities(options) // keeps the SDK's own validation of the options
      m.options.push(options)
      return m.activities
    }),
    startChild: m.startChild
  }
})

const { modulesOperation, vehicleSearch, webhookDelivery } = await import("../../workflows/index.js")
const { DELIVERY_RETRY, SOURCE_RETRY } = await import("../../workflows/shared.js")
const { WorkflowExecutionAlreadyStartedError } = await import("@temporalio/common")

const activityFailure = (cause: Error) =>
  new ActivityFailure("Activity task failed", "fetchModule", "2", RetryState.MAXIMUM_ATTEMPTS_REACHED, "worker", cause)

const answered = { status: "completed", data: { total: 0, items: [] }, error: null, warnings: [] }
const retry = { ...SOURCE_RETRY, initialIntervalMs: 250 }
const deliveryRetry = { ...DELIVERY_RETRY, initialIntervalMs: 100 }
const DELIVERY_ID = "5d1c3a86-7a0f-4b8e-9c52-0f6a1e2b3c4d"

beforeEach(() => {
  for (const fn of Object.values(m.activities)) fn.mockReset()
  m.activities.markProcessing.mockResolvedValue(undefined)
  m.activities.recordModule.mockResolvedValue(undefined)
  m.activities.finalizeOperation.mockResolvedValue(undefined)
  m.activities.finalizeVehicleSearch.mockResolvedValue(undefined)
  m.activities.emitEvent.mockResolvedValue(null)
  m.startChild.mockReset()
  m.startChild.mockResolvedValue({})
})

describe("activity options", () => {
  it("bookkeeping retries without limit; source lookups use the operation's policy; all have timeouts", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry, deliveryRetry })
    const [bookkeeping, ...rest] = m.options
    expect(bookkeeping).toMatchObject({ startToCloseTimeout: "30 seconds", retry: { initialInterval: 500, backoffCoefficient: 2 } })
    expect(bookkeeping!.retry.maximumAttempts).toBeUndefined()
    expect(rest.at(-1)).toEqual({
      startToCloseTimeout: "1 minute",
      retry: { maximumAttempts: 3, initialInterval: 250, backoffCoefficient: 2, maximumInterval: 10_000 }
    })
  })
})

describe("modulesOperation", () => {
  it("records every module and finalizes with the rule's status", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    await expect(modulesOperation({ operationId: "op_1", modules: ["fines", "vtv"], retry, deliveryRetry })).resolves.toBe("completed")
    expect(m.activities.markProcessing).toHaveBeenCalledWith("op_1")
    expect(m.activities.recordModule).toHaveBeenCalledTimes(2)
    expect(m.activities.finalizeOperation).toHaveBeenCalledWith({ operationId: "op_1", status: "completed" })
  })

  it("a retryable failure that outlived its retries is a module error that may be retried later", async () => {
    m.activities.fetchModule.mockImplementation(async ({ module }: { module: string }) => {
      if (module === "fines") throw activityFailure(ApplicationFailure.create({ type: "ModuleUnavailable", message: "fines down", nonRetryable: false }))
      return answered
    })
    await expect(modulesOperation({ operationId: "op_1", modules: ["fines", "vtv"], retry, deliveryRetry })).resolves.toBe("partial")
    expect(m.activities.recordModule).toHaveBeenCalledWith({
      operationId: "op_1",
      module: "fines",
      outcome: { status: "failed", data: null, error: { code: "module_unavailable", message: "fines down", retryable: true }, warnings: [] }
    })
  })

  it("a non-retryable failure is a module error that should not be retried", async () => {
    m.activities.fetchModule.mockRejectedValue(
      activityFailure(ApplicationFailure.create({ type: "ModuleUnavailable", message: "gone", nonRetryable: true }))
    )
    await expect(modulesOperation({ operationId: "op_1", modules: ["gnc"], retry, deliveryRetry })).resolves.toBe("failed")
    expect(m.activities.recordModule.mock.calls[0]![0].outcome.error).toEqual({ code: "module_unavailable", message: "gone", retryable: false })
  })

  it("a timeout is a retryable module error", async () => {
    m.activities.fetchModule.mockRejectedValue(activityFailure(new TimeoutFailure("timed out", undefined, TimeoutType.START_TO_CLOSE)))
    await modulesOperation({ operationId: "op_1", modules: ["vtv"], retry, deliveryRetry })
    expect(m.activities.recordModule.mock.calls[0]![0].outcome.error).toMatchObject({ retryable: true })
  })

  it("anything but an activity failure (a cancellation, say) is not swallowed", async () => {
    m.activities.fetchModule.mockRejectedValue(new CancelledFailure("cancelled"))
    await expect(modulesOperation({ operationId: "op_1", modules: ["vtv"], retry, deliveryRetry })).rejects.toBeInstanceOf(CancelledFailure)
    expect(m.activities.finalizeOperation).not.toHaveBeenCalled()
  })
})

describe("vehicleSearch", () => {
  it("stores the response, or the error when the source stayed unavailable", async () => {
    m.activities.searchVehicle.mockResolvedValueOnce({ success: true, found: false, data: null })
    await expect(vehicleSearch({ operationId: "op_2", retry, deliveryRetry })).resolves.toEqual({
      ok: true,
      response: { success: true, found: false, data: null }
    })
    m.activities.searchVehicle.mockRejectedValueOnce(
      activityFailure(ApplicationFailure.create({ type: "SourceUnavailable", message: "down", nonRetryable: false }))
    )
    await vehicleSearch({ operationId: "op_2", retry, deliveryRetry })
    expect(m.activities.finalizeVehicleSearch).toHaveBeenLastCalledWith({
      operationId: "op_2",
      result: { ok: false, error: { code: "temporarily_unavailable", message: "down", retryable: true } }
    })
  })
})

describe("the event step", () => {
  it("after finalizing, starts the event's delivery as a child that outlives the operation", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    m.activities.emitEvent.mockResolvedValue(DELIVERY_ID)
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry, deliveryRetry })
    expect(m.activities.emitEvent).toHaveBeenCalledWith({ operationId: "op_1" })
    expect(m.activities.finalizeOperation.mock.invocationCallOrder[0]).toBeLessThan(
      m.activities.emitEvent.mock.invocationCallOrder[0]!
    )
    expect(m.startChild).toHaveBeenCalledTimes(1)
    const [workflow, options] = m.startChild.mock.calls[0]!
    expect(workflow).toBe(webhookDelivery)
    expect(options).toEqual({
      workflowId: `webhook-delivery/${DELIVERY_ID}`,
      args: [{ deliveryId: DELIVERY_ID, retry: deliveryRetry }],
      parentClosePolicy: "ABANDON",
      workflowIdReusePolicy: "REJECT_DUPLICATE"
    })
  })

  it("without a webhook there is nothing to start", async () => {
    m.activities.searchVehicle.mockResolvedValue({ success: true, found: false, data: null })
    await vehicleSearch({ operationId: "op_2", retry, deliveryRetry })
    expect(m.activities.emitEvent).toHaveBeenCalledWith({ operationId: "op_2" })
    expect(m.startChild).not.toHaveBeenCalled()
  })

  it("a delivery already started (by the API's reconciler) is fine; any other start failure is not swallowed", async () => {
    m.activities.searchVehicle.mockResolvedValue({ success: true, found: false, data: null })
    m.activities.emitEvent.mockResolvedValue(DELIVERY_ID)
    m.startChild.mockRejectedValueOnce(
      new WorkflowExecutionAlreadyStartedError("already started", `webhook-delivery/${DELIVERY_ID}`, "webhookDelivery")
    )
    await expect(vehicleSearch({ operationId: "op_2", retry, deliveryRetry })).resolves.toMatchObject({ ok: true })
    m.startChild.mockRejectedValueOnce(new Error("boom"))
    await expect(vehicleSearch({ operationId: "op_2", retry, deliveryRetry })).rejects.toThrow("boom")
  })
})

describe("webhookDelivery", () => {
  const deliveryFailure = (nonRetryable: boolean) =>
    new ActivityFailure(
      "Activity task failed",
      "attemptDelivery",
      "1",
      nonRetryable ? RetryState.NON_RETRYABLE_FAILURE : RetryState.MAXIMUM_ATTEMPTS_REACHED,
      "worker",
      ApplicationFailure.create({ type: "DeliveryFailed", message: "the endpoint answered 500", nonRetryable })
    )

  it("one activity under the delivery policy (five attempts), with a timeout above the sender's", async () => {
    m.activities.attemptDelivery.mockResolvedValue("processed")
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })).resolves.toBe("processed")
    expect(m.options.at(-1)).toEqual({
      startToCloseTimeout: "30 seconds",
      retry: { maximumAttempts: 5, initialInterval: 100, backoffCoefficient: 5, maximumInterval: 7_200_000 }
    })
    expect(m.activities.attemptDelivery).toHaveBeenCalledWith({ deliveryId: DELIVERY_ID, policy: deliveryRetry })
  })

  it("attempts that run out, or a final refusal, end the delivery failed rather than the workflow", async () => {
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(false))
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })).resolves.toBe("failed")
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(true))
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })).resolves.toBe("failed")
  })
})
