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
    finalizeVehicleSearch: vi.fn()
  },
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
    })
  }
})

const { modulesOperation, vehicleSearch } = await import("../../workflows/index.js")
const { SOURCE_RETRY } = await import("../../workflows/shared.js")

const activityFailure = (cause: Error) =>
  new ActivityFailure("Activity task failed", "fetchModule", "2", RetryState.MAXIMUM_ATTEMPTS_REACHED, "worker", cause)

const answered = { status: "completed", data: { total: 0, items: [] }, error: null, warnings: [] }
const retry = { ...SOURCE_RETRY, initialIntervalMs: 250 }

beforeEach(() => {
  for (const fn of Object.values(m.activities)) fn.mockReset()
  m.activities.markProcessing.mockResolvedValue(undefined)
  m.activities.recordModule.mockResolvedValue(undefined)
  m.activities.finalizeOperation.mockResolvedValue(undefined)
  m.activities.finalizeVehicleSearch.mockResolvedValue(undefined)
})

describe("activity options", () => {
  it("bookkeeping retries without limit; source lookups use the operation's policy; all have timeouts", async () => {
    m.activities.fetchModule.mockResolvedValue(answered)
    await modulesOperation({ operationId: "op_1", modules: ["fines"], retry })
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
    await expect(modulesOperation({ operationId: "op_1", modules: ["fines", "vtv"], retry })).resolves.toBe("completed")
    expect(m.activities.markProcessing).toHaveBeenCalledWith("op_1")
    expect(m.activities.recordModule).toHaveBeenCalledTimes(2)
    expect(m.activities.finalizeOperation).toHaveBeenCalledWith({ operationId: "op_1", status: "completed" })
  })

  it("a retryable failure that outlived its retries is a module error that may be retried later", async () => {
    m.activities.fetchModule.mockImplementation(async ({ module }: { module: string }) => {
      if (module === "fines") throw activityFailure(ApplicationFailure.create({ type: "ModuleUnavailable", message: "fines down", nonRetryable: false }))
      return answered
    })
    await expect(modulesOperation({ operationId: "op_1", modules: ["fines", "vtv"], retry })).resolves.toBe("partial")
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
    await expect(modulesOperation({ operationId: "op_1", modules: ["gnc"], retry })).resolves.toBe("failed")
    expect(m.activities.recordModule.mock.calls[0]![0].outcome.error).toEqual({ code: "module_unavailable", message: "gone", retryable: false })
  })

  it("a timeout is a retryable module error", async () => {
    m.activities.fetchModule.mockRejectedValue(activityFailure(new TimeoutFailure("timed out", undefined, TimeoutType.START_TO_CLOSE)))
    await modulesOperation({ operationId: "op_1", modules: ["vtv"], retry })
    expect(m.activities.recordModule.mock.calls[0]![0].outcome.error).toMatchObject({ retryable: true })
  })

  it("anything but an activity failure (a cancellation, say) is not swallowed", async () => {
    m.activities.fetchModule.mockRejectedValue(new CancelledFailure("cancelled"))
    await expect(modulesOperation({ operationId: "op_1", modules: ["vtv"], retry })).rejects.toBeInstanceOf(CancelledFailure)
    expect(m.activities.finalizeOperation).not.toHaveBeenCalled()
  })
})

describe("vehicleSearch", () => {
  it("stores the response, or the error when the source stayed unavailable", async () => {
    m.activities.searchVehicle.mockResolvedValueOnce({ success: true, found: false, data: null })
    await expect(vehicleSearch({ operationId: "op_2", retry })).resolves.toEqual({
      ok: true,
      response: { success: true, found: false, data: null }
    })
    m.activities.searchVehicle.mockRejectedValueOnce(
      activityFailure(ApplicationFailure.create({ type: "SourceUnavailable", message: "down", nonRetryable: false }))
    )
    await vehicleSearch({ operationId: "op_2", retry })
    expect(m.activities.finalizeVehicleSearch).toHaveBeenLastCalledWith({
      operationId: "op_2",
      result: { ok: false, error: { code: "temporarily_unavailable", message: "down", retryable: true } }
    })
  })
})
