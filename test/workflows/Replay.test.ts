/**
 * The Temporal workflows, offline: they bundle for the workflow sandbox, and they replay
 * hand-built histories (the command sequence each path must produce), with determinism checks on.
 */
import * as Path from "node:path"
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker"
import { beforeAll, describe, expect, it } from "vitest"
import type { ModuleOutcome, ModulesOperationInput, VehicleSearchInput } from "../../workflows/shared.js"
import { SOURCE_RETRY } from "../../workflows/shared.js"
import { HistoryBuilder } from "../support/History.js"
import { ROOT } from "../support/Processes.js"

let workflowBundle: { code: string }

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger("WARN") })
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: Path.join(ROOT, "workflows", "index.ts"),
    logger: new DefaultLogger("WARN")
  })
}, 120_000)

const replay = (history: ReturnType<HistoryBuilder["build"]>, workflowId = "modules/sandbox/acct/AB123CD/fines+vtv/op_1") =>
  Worker.runReplayHistory({ workflowBundle, replayName: "test" }, history, workflowId)

const input: ModulesOperationInput = { operationId: "op_1", modules: ["fines", "vtv"], retry: SOURCE_RETRY }
const answered: ModuleOutcome = { status: "completed", data: { total: 0, items: [] }, error: null, warnings: [] }
const unavailable = { type: "ModuleUnavailable", message: "The fines source is unavailable", nonRetryable: false }

/** The modules workflow for two modules, each fetch either answering or failing for good. */
const modulesHistory = (fetches: [ModuleOutcome | "fails", ModuleOutcome | "fails"], status: string) => {
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
  const t5 = b.workflowTask()
  return b.completed(t5, status).build()
}

describe("workflow bundle", () => {
  it("bundles for the sandbox without Effect or Node modules", () => {
    expect(workflowBundle.code.length).toBeGreaterThan(100_000)
    expect(workflowBundle.code.length).toBeLessThan(3_000_000)
    expect(workflowBundle.code).toContain("modulesOperation")
    expect(workflowBundle.code).toContain("vehicleSearch")
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

  it("rejects a history whose commands come in another order", async () => {
    const b = new HistoryBuilder().started("modulesOperation", input)
    const t1 = b.workflowTask()
    // the code marks the operation as processing first; this history fetches first
    b.schedule(t1, "1", "fetchModule", { operationId: "op_1", module: "fines" }).complete("1", answered)
    await expect(replay(b.build())).rejects.toThrow(/DeterminismViolation|does not match|Nondeterminism/i)
  })
})

describe("vehicleSearch replays", () => {
  const searchInput: VehicleSearchInput = { operationId: "op_2", retry: SOURCE_RETRY }
  const history = (search: "answers" | "fails") => {
    const b = new HistoryBuilder().started("vehicleSearch", searchInput)
    const t1 = b.workflowTask()
    b.schedule(t1, "1", "markProcessing", "op_2").complete("1")
    const t2 = b.workflowTask()
    b.schedule(t2, "2", "searchVehicle", { operationId: "op_2" })
    if (search === "answers") b.complete("2", { success: true, found: false, data: null })
    else b.fail("2", { type: "SourceUnavailable", message: "down", nonRetryable: false })
    const t3 = b.workflowTask()
    b.schedule(t3, "3", "finalizeVehicleSearch", { operationId: "op_2" }).complete("3")
    const t4 = b.workflowTask()
    return b.completed(t4, {}).build()
  }

  it("the search answering", async () => {
    await expect(replay(history("answers"), "vehicle/sandbox/acct/AB123CD/op_2")).resolves.toBeUndefined()
  })

  it("the search failing", async () => {
    await expect(replay(history("fails"), "vehicle/sandbox/acct/AB123CD/op_2")).resolves.toBeUndefined()
  })
})
