/**
 * Histories exported from runs on a live Temporal server (`test/workflows/fixtures/`, written by
 * the live tests with EXPORT_HISTORIES=dir) replay against today's workflow code. A change that
 * would break a running workflow of any kind fails here, before it is deployed (see the README's
 * "Changing a workflow"). The fixtures were recorded with payload encryption on: they hold no
 * plate in clear, and replay decodes them with the live tests' key.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { historyFromJSON } from "@temporalio/common/lib/proto-utils.js"
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker"
import { Option } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { makeAesGcmCodec, parseKeyRing } from "../../src/platform/TemporalCodec.js"
import { emptyResource } from "@opentelemetry/resources"
import { workflowSpanSinks } from "../../worker/Tracing.js"
import { workflowSources } from "../../worker/Workers.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"
import { ROOT } from "../support/Processes.js"

const FIXTURES = Path.join(ROOT, "test", "workflows", "fixtures")
const EXPECTED = ["modules-completed", "vehicle-search", "report-completed", "delivery-processed", "delivery-third-attempt", "delivery-exhausted"]

let workflowBundle: { code: string }
const exported = new InMemorySpanExporter()
const sinks = workflowSpanSinks(Option.some({ processor: new SimpleSpanProcessor(exported), resource: emptyResource() }))
const fixtures = (await Fs.readdir(FIXTURES)).filter((name) => name.endsWith(".json")).sort()

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger("WARN") })
  workflowBundle = await bundleWorkflowCode({ ...workflowSources(), logger: new DefaultLogger("WARN") })
}, 120_000)

describe("histories exported from a live server", () => {
  it("cover every kind of workflow and its endings", () => {
    expect(fixtures.map((name) => name.replace(/\.json$/, ""))).toEqual(expect.arrayContaining(EXPECTED))
  })

  it.each(fixtures)("%s replays against the current workflows", async (name) => {
    const raw = await Fs.readFile(Path.join(FIXTURES, name), "utf8")
    expect(raw).not.toMatch(/AB123CD|AB202CD/)
    await Worker.runReplayHistory(
      { workflowBundle, sinks, replayName: name, dataConverter: { payloadCodecs: [makeAesGcmCodec(parseKeyRing(LIVE_CODEC_KEYS))] } },
      historyFromJSON(JSON.parse(raw))
    )
    expect(exported.getFinishedSpans()).toEqual([])
  }, 60_000)

  it("a history whose commands no longer match is refused (the check is real)", async () => {
    const raw = JSON.parse(await Fs.readFile(Path.join(FIXTURES, "modules-completed.json"), "utf8"))
    // rename the first scheduled activity: the replayer must see the workflow ask for another one
    const scheduled = raw.events.find((e: { activityTaskScheduledEventAttributes?: unknown }) => e.activityTaskScheduledEventAttributes)
    scheduled.activityTaskScheduledEventAttributes.activityType.name = "renamedActivity"
    await expect(Worker.runReplayHistory(
      { workflowBundle, sinks, replayName: "tampered", dataConverter: { payloadCodecs: [makeAesGcmCodec(parseKeyRing(LIVE_CODEC_KEYS))] } },
      historyFromJSON(raw)
    )).rejects.toThrow(/[Nn]ondetermin/)
  }, 60_000)
})
