/**
 * The Temporal workflows, offline: they bundle for the workflow sandbox with their tracing
 * interceptors, and they replay hand-built histories (the command sequence each path must
 * produce), with determinism checks on, exporting no span while replaying.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker"
import { Option } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import type { DeliveryInput, ModuleOutcome, ModulesOperationInput, ReportInput, VehicleSearchInput } from "../../workflows/shared.js"
import { DELIVERY_RETRY, SOURCE_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { emptyResource } from "@opentelemetry/resources"
import { workflowSpanSinks } from "../../worker/Tracing.js"
import { workflowSources } from "../../worker/Workers.js"
import { HistoryBuilder } from "../support/History.js"

let workflowBundle: { code: string }
const exported = new InMemorySpanExporter()
const sinks = workflowSpanSinks(Option.some({ processor: new SimpleSpanProcessor(exported), resource: emptyResource() }))

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger("WARN") })
  workflowBundle = await bundleWorkflowCode({ ...workflowSources(), logger: new DefaultLogger("WARN") })
}, 120_000)

const replay = (history: ReturnType<HistoryBuilder["build"]>, workflowId = "modules/sandbox/acct/AB123CD/fines+vtv/op_1") =>
  Worker.runReplayHistory({ workflowBundle, sinks, replayName: "test" }, history, workflowId)

const input: ModulesOperationInput = {
  operationId: "op_1",
  modules: ["fines", "vtv"],
  retry: SOURCE_RETRY,
  deliveryRetry: DELIVERY_RETRY
}
const answered: ModuleOutcome = { status: "completed", data: { total: 0, items: [] }, error: null, warnings: [] }
const unavailable = { type: "ModuleUnavailable", message: "The fines source is unavailable", nonRetryable: false }

const DELIVERY_ID = "5d1c3a86-7a0f-4b8e-9c52-0f6a1e2b3c4d"
const DELIVERY_WORKFLOW_ID = `webhook-delivery/${DELIVERY_ID}`

/**
 * The event step, after the final state is stored: the event activity (`activityId`), then, when
 * it returned a delivery, the delivery's child workflow (started, or already running). `skipped`
 * leaves the step out, as a wrong history would.
 */
type EventStep = "none" | "started" | "exists" | "skipped"
const publish = (b: HistoryBuilder, activityId: string, operationId: string, child: EventStep) => {
  if (child === "skipped") return b.workflowTask()
  const t1 = b.workflowTask()
  b.schedule(t1, activityId, "emitEvent", { operationId }).complete(activityId, child === "none" ? null : DELIVERY_ID)
  if (child === "none") return b.workflowTask()
  const t2 = b.workflowTask()
  const initiated = b.startChild(t2, "webhookDelivery", DELIVERY_WORKFLOW_ID, { deliveryId: DELIVERY_ID, retry: DELIVERY_RETRY })
  if (child === "started") b.childStarted(initiated, "webhookDelivery", DELIVERY_WORKFLOW_ID)
  else b.childAlreadyExists(initiated, "webhookDelivery", DELIVERY_WORKFLOW_ID)
  return b.workflowTask()
}

/** The modules workflow for two modules, each fetch either answering or failing for good. */
const modulesHistory = (
  fetches: [ModuleOutcome | "fails", ModuleOutcome | "fails"],
  status: string,
  child: EventStep = "none"
) => {
  const b = new HistoryBuilder().started("modulesOperation", input)
  const t1 = b.workflowTask()
  b.schedule(t1, "1", "markProcessing", "op_1").complete("1")
  const t2 = b.workflowTask()
  b.schedule(t2, "2", "fetchModule", { operationId: "op_1", module: "fines" })
  b.schedule(t2, "3", "fetchModule", { operationId: "op_1", module: "vtv" })
  fetches.forEach((fetch, i) => (fetch === "fails" ? b.fail(String(i + 2), unavailable) : b.complete(String(i + 2), fetch)))
  const t3 = b.workflowTask()
  b.schedule(t3, "4", "recordModule", { operationId: "op_1", module: "fines" })
  b.schedule(t3, "5", "recordModule", { operationId: "op_1", module: "vtv" })
  b.complete("4").complete("5")
  const t4 = b.workflowTask()
  b.schedule(t4, "6", "finalizeOperation", { operationId: "op_1", status }).complete("6")
  const last = publish(b, "7", "op_1", child)
  return b.completed(last, status).build()
}

describe("workflow bundle", () => {
  it("bundles for the sandbox without Effect or Node modules, with the tracing interceptors", () => {
    expect(workflowBundle.code.length).toBeGreaterThan(100_000)
    // the tracing interceptors' OpenTelemetry SDK about doubles it (1.7 to 3.5 MB, inline source map included)
    expect(workflowBundle.code.length).toBeLessThan(4_000_000)
    expect(workflowBundle.code).toContain("modulesOperation")
    expect(workflowBundle.code).toContain("vehicleSearch")
    expect(workflowBundle.code).toContain("webhookDelivery")
    expect(workflowBundle.code).toContain("OpenTelemetryInboundInterceptor")
    expect(workflowBundle.code).not.toMatch(/@effect\/|node_modules\/effect\//)
  })
})

describe("modulesOperation replays", () => {
  it("every module answering", async () => {
    await expect(replay(modulesHistory([answered, answered], "completed"))).resolves.toBeUndefined()
  })

  it("one module failing through its retries", async () => {
    await expect(replay(modulesHistory(["fails", answered], "partial"))).resolves.toBeUndefined()
  })

  it("every module failing", async () => {
    await expect(replay(modulesHistory(["fails", "fails"], "failed"))).resolves.toBeUndefined()
  })

  it("publishing the event and starting its delivery", async () => {
    await expect(replay(modulesHistory([answered, answered], "completed", "started"))).resolves.toBeUndefined()
  })

  it("a delivery that was already running (started by the reconciler)", async () => {
    await expect(replay(modulesHistory(["fails", "fails"], "failed", "exists"))).resolves.toBeUndefined()
  })

  it("rejects a history that skips the event step", async () => {
    await expect(replay(modulesHistory([answered, answered], "completed", "skipped"))).rejects.toThrow(
      /DeterminismViolation|does not match|Nondeterminism/i
    )
  })

  it("rejects a history whose commands come in another order", async () => {
    const b = new HistoryBuilder().started("modulesOperation", input)
    const t1 = b.workflowTask()
    // the code marks the operation as processing first; this history fetches first
    b.schedule(t1, "1", "fetchModule", { operationId: "op_1", module: "fines" }).complete("1", answered)
    await expect(replay(b.build())).rejects.toThrow(/DeterminismViolation|does not match|Nondeterminism/i)
  })
})

describe("vehicleSearch replays", () => {
  const searchInput: VehicleSearchInput = { operationId: "op_2", retry: SOURCE_RETRY, deliveryRetry: DELIVERY_RETRY }
  const history = (search: "answers" | "fails", child: "none" | "started" = "none") => {
    const b = new HistoryBuilder().started("vehicleSearch", searchInput)
    const t1 = b.workflowTask()
    b.schedule(t1, "1", "markProcessing", "op_2").complete("1")
    const t2 = b.workflowTask()
    b.schedule(t2, "2", "searchVehicle", { operationId: "op_2" })
    if (search === "answers") b.complete("2", { success: true, found: false, data: null })
    else b.fail("2", { type: "SourceUnavailable", message: "down", nonRetryable: false })
    const t3 = b.workflowTask()
    b.schedule(t3, "3", "finalizeVehicleSearch", { operationId: "op_2" }).complete("3")
    const last = publish(b, "4", "op_2", child)
    return b.completed(last, {}).build()
  }

  it("the search answering", async () => {
    await expect(replay(history("answers"), "vehicle/sandbox/acct/AB123CD/op_2")).resolves.toBeUndefined()
  })

  it("the search failing", async () => {
    await expect(replay(history("fails"), "vehicle/sandbox/acct/AB123CD/op_2")).resolves.toBeUndefined()
  })

  it("the search answering, with its event delivered", async () => {
    await expect(replay(history("answers", "started"), "vehicle/sandbox/acct/AB123CD/op_2")).resolves.toBeUndefined()
  })
})

describe("report replays", () => {
  const reportInput: ReportInput = { operationId: "rep_1", modules: ["fines", "vtv"], retry: SOURCE_RETRY, deliveryRetry: DELIVERY_RETRY }
  const WORKFLOW_ID = "report/sandbox/acct/hash/rep_1"
  /** The vehicle and both modules looked up at once; each module recorded as it lands. */
  const history = (vehicle: "found" | "fails", status: string, child: "none" | "started" = "none", order: "vehicle-first" | "modules-first" = "vehicle-first") => {
    const b = new HistoryBuilder().started("report", reportInput)
    const t1 = b.workflowTask()
    b.schedule(t1, "1", "markProcessing", "rep_1").complete("1")
    const t2 = b.workflowTask()
    if (order === "vehicle-first") {
      b.schedule(t2, "2", "searchVehicle", { operationId: "rep_1" })
      b.schedule(t2, "3", "fetchModule", { operationId: "rep_1", module: "fines" })
      b.schedule(t2, "4", "fetchModule", { operationId: "rep_1", module: "vtv" })
    } else {
      b.schedule(t2, "3", "fetchModule", { operationId: "rep_1", module: "fines" })
      b.schedule(t2, "2", "searchVehicle", { operationId: "rep_1" })
      b.schedule(t2, "4", "fetchModule", { operationId: "rep_1", module: "vtv" })
    }
    if (vehicle === "found") b.complete("2", { success: true, found: true, data: { plate: "AE100FG" } })
    else b.fail("2", { type: "SourceUnavailable", message: "down", nonRetryable: false })
    b.complete("3", answered).complete("4", answered)
    const t3 = b.workflowTask()
    b.schedule(t3, "5", "recordModule", { operationId: "rep_1", module: "fines" })
    b.schedule(t3, "6", "recordModule", { operationId: "rep_1", module: "vtv" })
    b.complete("5").complete("6")
    const t4 = b.workflowTask()
    b.schedule(t4, "7", "finalizeReport", { operationId: "rep_1", status }).complete("7")
    const last = publish(b, "8", "rep_1", child)
    return b.completed(last, status).build()
  }

  it("the vehicle and every module answering", async () => {
    await expect(replay(history("found", "completed"), WORKFLOW_ID)).resolves.toBeUndefined()
  })

  it("the vehicle source failing through its retries: a partial report, with its event delivered", async () => {
    await expect(replay(history("fails", "partial", "started"), WORKFLOW_ID)).resolves.toBeUndefined()
  })

  it("rejects a history that looked the modules up before the vehicle", async () => {
    await expect(replay(history("found", "completed", "none", "modules-first"), WORKFLOW_ID)).rejects.toThrow(/[Nn]ondeterminism/)
  })
})

describe("webhookDelivery replays", () => {
  const deliveryInput: DeliveryInput = { deliveryId: DELIVERY_ID, retry: DELIVERY_RETRY }
  const history = (attempts: "confirmed" | "exhausted") => {
    const b = new HistoryBuilder().started("webhookDelivery", deliveryInput)
    const t1 = b.workflowTask()
    b.schedule(t1, "1", "attemptDelivery", { deliveryId: DELIVERY_ID, policy: DELIVERY_RETRY })
    // Temporal retries the activity on its own: the history shows only the attempt that settled it
    if (attempts === "confirmed") b.complete("1", "processed")
    else b.fail("1", { type: "DeliveryFailed", message: "the endpoint answered 500", nonRetryable: false })
    const t2 = b.workflowTask()
    return b.completed(t2, attempts === "confirmed" ? "processed" : "failed").build()
  }

  it("the endpoint confirming", async () => {
    await expect(replay(history("confirmed"), DELIVERY_WORKFLOW_ID)).resolves.toBeUndefined()
  })

  it("the attempts running out", async () => {
    await expect(replay(history("exhausted"), DELIVERY_WORKFLOW_ID)).resolves.toBeUndefined()
  })

  it("rejects a history with another activity", async () => {
    const b = new HistoryBuilder().started("webhookDelivery", deliveryInput)
    const t1 = b.workflowTask()
    b.schedule(t1, "1", "emitEvent", { operationId: "op_1" }).complete("1", "processed")
    const t2 = b.workflowTask()
    await expect(replay(b.completed(t2, "processed").build(), DELIVERY_WORKFLOW_ID)).rejects.toThrow(
      /DeterminismViolation|does not match|Nondeterminism/i
    )
  })
})

describe("replaying", () => {
  // runs after every replay of this file
  it("exports no span (the spans were exported when the workflow ran)", () => {
    expect(exported.getFinishedSpans()).toEqual([])
  })
})
