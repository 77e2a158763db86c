/**
 * The Temporal bindings' branching, with the workflow SDK mocked: which policies and timeouts the
 * activities get, how an activity failure becomes a module's error (always with our message),
 * the delivery child's options and labels, the final status search attribute and the settling of
 * exhausted deliveries (each behind its patch). (Replay covers the real sandbox.)
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TimeoutFailure,
  TimeoutType,
  TypedSearchAttributes
} from "@temporalio/common"
import { beforeEach, describe, expect, it, vi } from "vitest"

const m = vi.hoisted(() => ({
  activities: {
    markProcessing: vi.fn(),
    fetchModule: vi.fn(),
    recordModule: vi.fn(),
    finalizeOperation: vi.fn(),
    searchVehicle: vi.fn(),
    finalizeVehicleSearch: vi.fn(),
    finalizeReport: vi.fn(),
    emitEvent: vi.fn(),
    attemptDelivery: vi.fn(),
    settleDelivery: vi.fn()
  },
  startChild: vi.fn(),
  patched: vi.fn(),
  upsertSearchAttributes: vi.fn(),
  parentAttributes: [] as Array<{ key: unknown; value: unknown }>,
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
    startChild: m.startChild,
    patched: m.patched,
    upsertSearchAttributes: m.upsertSearchAttributes,
    workflowInfo: () => ({ typedSearchAttributes: new TypedSearchAttributes(m.parentAttributes as any) })
  }
})

const { modulesOperation, report, vehicleSearch, webhookDelivery } = await import("../../workflows/index.js")
const { PATCHES } = await import("../../workflows/shared.js")
const { DELIVERY_RETRY, SOURCE_RETRY } = await import("../../src/platform/sandboxSafe/RetryPolicy.js")
const { ACTIVITY_TIMEOUTS } = await import("../../src/platform/sandboxSafe/ActivityTimeouts.js")
const { searchAttributeKeys } = await import("../../workflows/searchAttributes.js")
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
  m.activities.finalizeReport.mockResolvedValue(undefined)
  m.activities.emitEvent.mockResolvedValue(null)
  m.startChild.mockReset()
  m.startChild.mockResolvedValue({})
  m.patched.mockReset()
  m.patched.mockReturnValue(true)
  m.upsertSearchAttributes.mockReset()
  m.parentAttributes = [
    { key: searchAttributeKeys.accountId, value: "acct_1" },
    { key: searchAttributeKeys.environment, value: "sandbox" }
  ]
})

/** A failure whose text must never reach a client: a stack trace and SQL. */
const INTERNAL = "Error: relation \"accounts\" does not exist\n    at select * from accounts where id = $1 (/app/src/x.ts:12:3)"

describe("activity options", () => {
  it("bookkeeping retries without limit; source lookups use the operation's policy; all have timeouts and heartbeats", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry, deliveryRetry })
    const [bookkeeping, ...rest] = m.options
    expect(bookkeeping).toEqual({
      startToCloseTimeout: ACTIVITY_TIMEOUTS.bookkeepingMs,
      heartbeatTimeout: ACTIVITY_TIMEOUTS.heartbeatMs,
      retry: { initialInterval: 500, backoffCoefficient: 2, maximumInterval: 30_000 }
    })
    expect(rest.at(-1)).toEqual({
      startToCloseTimeout: ACTIVITY_TIMEOUTS.sourceMs,
      heartbeatTimeout: ACTIVITY_TIMEOUTS.heartbeatMs,
      retry: { maximumAttempts: 3, initialInterval: 250, backoffCoefficient: 2, maximumInterval: 10_000 }
    })
  })
})

describe("the final status search attribute", () => {
  it("is written at the end of each workflow, behind its patch", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry, deliveryRetry })
    expect(m.patched).toHaveBeenCalledWith(PATCHES.statusSearchAttribute)
    expect(m.upsertSearchAttributes).toHaveBeenLastCalledWith([{ key: searchAttributeKeys.status, value: "completed" }])
    expect(m.activities.finalizeOperation.mock.invocationCallOrder[0]).toBeLessThan(m.upsertSearchAttributes.mock.invocationCallOrder[0]!)

    m.activities.searchVehicle.mockRejectedValueOnce(activityFailure(ApplicationFailure.create({ type: "SourceUnavailable", message: "x" })))
    await vehicleSearch({ operationId: "op_2", retry, deliveryRetry })
    expect(m.upsertSearchAttributes).toHaveBeenLastCalledWith([{ key: searchAttributeKeys.status, value: "failed" }])

    m.activities.attemptDelivery.mockResolvedValueOnce("processed")
    await webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })
    expect(m.upsertSearchAttributes).toHaveBeenLastCalledWith([{ key: searchAttributeKeys.status, value: "processed" }])
  })

  it("runs started before the patch (patched() false) do not write it", async () => {
    m.patched.mockReturnValue(false)
    m.activities.fetchModule.mockResolvedValue(answered)
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry, deliveryRetry })
    expect(m.upsertSearchAttributes).not.toHaveBeenCalled()
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
      if (module === "fines") throw activityFailure(ApplicationFailure.create({ type: "ModuleUnavailable", message: INTERNAL, nonRetryable: false }))
      return answered
    })
    await expect(modulesOperation({ operationId: "op_1", modules: ["fines", "vtv"], retry, deliveryRetry })).resolves.toBe("partial")
    expect(m.activities.recordModule).toHaveBeenCalledWith({
      operationId: "op_1",
      module: "fines",
      outcome: {
        status: "failed",
        data: null,
        error: { code: "module_unavailable", message: "fines source unavailable", retryable: true },
        warnings: []
      }
    })
    expect(JSON.stringify(m.activities.recordModule.mock.calls)).not.toContain("accounts")
  })

  it("each module's failure has its own stable message", async () => {
    m.activities.fetchModule.mockRejectedValue(activityFailure(ApplicationFailure.create({ type: "Defect", message: INTERNAL })))
    await modulesOperation({ operationId: "op_1", modules: ["fines", "vtv", "tax_debt", "gnc"], retry, deliveryRetry })
    const messages = Object.fromEntries(
      m.activities.recordModule.mock.calls.map((args: Array<any>) => [args[0].module, args[0].outcome.error.message])
    )
    expect(messages).toEqual({
      fines: "fines source unavailable",
      vtv: "VTV source unavailable",
      tax_debt: "tax debt source unavailable",
      gnc: "GNC source unavailable"
    })
  })

  it("a non-retryable failure is a module error that should not be retried", async () => {
    m.activities.fetchModule.mockRejectedValue(
      activityFailure(ApplicationFailure.create({ type: "ModuleUnavailable", message: "gone", nonRetryable: true }))
    )
    await expect(modulesOperation({ operationId: "op_1", modules: ["gnc"], retry, deliveryRetry })).resolves.toBe("failed")
    expect(m.activities.recordModule.mock.calls[0]![0].outcome.error).toEqual({
      code: "module_unavailable",
      message: "GNC source unavailable",
      retryable: false
    })
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
      activityFailure(ApplicationFailure.create({ type: "SourceUnavailable", message: INTERNAL, nonRetryable: false }))
    )
    await vehicleSearch({ operationId: "op_2", retry, deliveryRetry })
    expect(m.activities.finalizeVehicleSearch).toHaveBeenLastCalledWith({
      operationId: "op_2",
      result: { ok: false, error: { code: "temporarily_unavailable", message: "vehicle source unavailable", retryable: true } }
    })
  })
})

describe("report", () => {
  it("looks the vehicle and every module up, records each module, finalizes with the vehicle part, and publishes", async () => {
    m.activities.searchVehicle.mockResolvedValueOnce({ success: true, found: true, data: { plate: "AE100FG" } })
    m.activities.fetchModule.mockResolvedValue(answered)
    m.activities.emitEvent.mockResolvedValueOnce(DELIVERY_ID)
    await expect(report({ operationId: "rep_1", modules: ["fines", "gnc"], retry, deliveryRetry })).resolves.toBe("completed")
    expect(m.activities.markProcessing).toHaveBeenCalledWith("rep_1")
    expect(m.activities.recordModule.mock.calls.map(([input]) => input.module)).toEqual(["fines", "gnc"])
    expect(m.activities.finalizeReport).toHaveBeenCalledWith({
      operationId: "rep_1",
      status: "completed",
      vehicle: { ok: true, response: { success: true, found: true, data: { plate: "AE100FG" } } }
    })
    expect(m.startChild).toHaveBeenCalledTimes(1)
    expect(m.upsertSearchAttributes).toHaveBeenCalledWith([{ key: searchAttributeKeys.status, value: "completed" }])
    // the lookups use the operation's policy, like modulesOperation's
    expect(m.options.at(-1)).toMatchObject({ retry: { maximumAttempts: 3, initialInterval: 250 } })
  })

  it("a vehicle not found makes it partial; a vehicle source down is a failed part with our message", async () => {
    m.activities.searchVehicle.mockResolvedValueOnce({ success: true, found: false, data: null })
    m.activities.fetchModule.mockResolvedValue(answered)
    await expect(report({ operationId: "rep_2", modules: ["vtv"], retry, deliveryRetry })).resolves.toBe("partial")

    m.activities.searchVehicle.mockRejectedValueOnce(
      activityFailure(ApplicationFailure.create({ type: "SourceUnavailable", message: INTERNAL, nonRetryable: false }))
    )
    m.activities.fetchModule.mockRejectedValueOnce(
      activityFailure(ApplicationFailure.create({ type: "ModuleUnavailable", message: INTERNAL, nonRetryable: true }))
    )
    await expect(report({ operationId: "rep_3", modules: ["vtv"], retry, deliveryRetry })).resolves.toBe("failed")
    expect(m.activities.finalizeReport).toHaveBeenLastCalledWith({
      operationId: "rep_3",
      status: "failed",
      vehicle: { ok: false, error: { code: "temporarily_unavailable", message: "vehicle source unavailable", retryable: true } }
    })
    expect(m.activities.recordModule).toHaveBeenLastCalledWith({
      operationId: "rep_3",
      module: "vtv",
      outcome: { status: "failed", data: null, error: { code: "module_unavailable", message: "VTV source unavailable", retryable: false }, warnings: [] }
    })
    expect(JSON.stringify(m.activities.finalizeReport.mock.calls)).not.toContain("select")
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
    expect(options).toMatchObject({
      workflowId: `webhook-delivery/${DELIVERY_ID}`,
      args: [{ deliveryId: DELIVERY_ID, retry: deliveryRetry }],
      parentClosePolicy: "ABANDON",
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      memo: { subject: DELIVERY_ID, accountId: "acct_1", environment: "sandbox", kind: "delivery" }
    })
    expect(options).not.toHaveProperty("taskQueue") // older inputs: the parent's queue
    expect(options.typedSearchAttributes.map((p: any) => [p.key.name, p.value])).toEqual([
      ["VdaAccountId", "acct_1"],
      ["VdaEnvironment", "sandbox"],
      ["VdaKind", "delivery"]
    ])
  })

  it("the delivery runs on the deliveries task queue when the input names it; without a labelled parent, no attributes", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    m.activities.emitEvent.mockResolvedValue(DELIVERY_ID)
    m.parentAttributes = []
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry, deliveryRetry, deliveryTaskQueue: "q-deliveries" })
    const [, options] = m.startChild.mock.calls[0]!
    expect(options.taskQueue).toBe("q-deliveries")
    expect(options).not.toHaveProperty("typedSearchAttributes")
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
      startToCloseTimeout: ACTIVITY_TIMEOUTS.deliveryMs,
      heartbeatTimeout: ACTIVITY_TIMEOUTS.heartbeatMs,
      retry: { maximumAttempts: 5, initialInterval: 100, backoffCoefficient: 5, maximumInterval: 7_200_000 }
    })
    expect(ACTIVITY_TIMEOUTS.deliveryMs).toBeGreaterThan(10_000) // the sender's own deadline
    expect(m.activities.attemptDelivery).toHaveBeenCalledWith({ deliveryId: DELIVERY_ID, policy: deliveryRetry })
    expect(m.activities.settleDelivery).not.toHaveBeenCalled()
  })

  it("attempts that run out, or a final refusal, end the delivery failed (settled) rather than the workflow", async () => {
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(false))
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })).resolves.toBe("failed")
    expect(m.patched).toHaveBeenCalledWith(PATCHES.settleExhaustedDelivery)
    expect(m.activities.settleDelivery).toHaveBeenCalledWith({ deliveryId: DELIVERY_ID })
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(true))
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })).resolves.toBe("failed")
    expect(m.activities.settleDelivery).toHaveBeenCalledTimes(2)
  })

  it("a resent delivery's run tells each activity its series; runs from before resends name none (the first)", async () => {
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(false))
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, series: 2, retry: deliveryRetry })).resolves.toBe("failed")
    expect(m.activities.attemptDelivery).toHaveBeenCalledWith({ deliveryId: DELIVERY_ID, series: 2, policy: deliveryRetry })
    expect(m.activities.settleDelivery).toHaveBeenCalledWith({ deliveryId: DELIVERY_ID, series: 2 })
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(false))
    await webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })
    expect(m.activities.attemptDelivery.mock.calls[1]![0]).not.toHaveProperty("series")
    expect(m.activities.settleDelivery.mock.calls[1]![0]).toStrictEqual({ deliveryId: DELIVERY_ID })
  })

  it("runs started before the settle patch end failed without the extra activity", async () => {
    m.patched.mockReturnValue(false)
    m.activities.attemptDelivery.mockRejectedValueOnce(deliveryFailure(false))
    await expect(webhookDelivery({ deliveryId: DELIVERY_ID, retry: deliveryRetry })).resolves.toBe("failed")
    expect(m.activities.settleDelivery).not.toHaveBeenCalled()
  })
})
