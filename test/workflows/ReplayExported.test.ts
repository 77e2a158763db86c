/**
 * Histories exported from runs on a live Temporal server (`test/workflows/fixtures/`, written by
 * the live tests with EXPORT_HISTORIES=dir) replay against today's workflow code. A change that
 * would break a running workflow of any kind fails here, before it is deployed (see the operations guide's
 * "Changing a workflow", docs/operations.md). The fixtures were recorded with payload encryption on: they hold no
 * plate in clear, and replay decodes them with the live tests' key.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import type { Payload } from "@temporalio/common"
import { historyFromJSON } from "@temporalio/common/lib/proto-utils.js"
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker"
import { Option } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { makeAesGcmCodec, parseKeyRing } from "../../src/platform/temporal/TemporalCodec.js"
import { emptyResource } from "@opentelemetry/resources"
import { workflowSpanSinks } from "../../worker/Tracing.js"
import { workflowSources } from "../../worker/Workers.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"
import { ROOT } from "../support/Processes.js"

const FIXTURES = Path.join(ROOT, "test", "workflows", "fixtures")
/** Every plate the live tests that export these histories send (test/workflows/Live.test.ts). */
const LIVE_PLATES = ["AB123CD", "AB202CD", "AE111FG", "AB987CD"]

/** Argentine plates, old (AAA999) and Mercosur (AA999AA). */
const platesIn = (text: string) => text.match(/\b(?:[A-Z]{2}\d{3}[A-Z]{2}|[A-Z]{3}\d{3})\b/g) ?? []

/** The plate's bytes as they would show in base64 at each of the three alignments. */
const base64Forms = (plate: string) =>
  [0, 1, 2].map((offset) => {
    const encoded = Buffer.from(`${"x".repeat(offset)}${plate}`).toString("base64")
    // drop the characters that mix in the padding bytes or the bytes around the plate
    const start = Math.ceil((offset * 4) / 3) + 1
    const end = Math.floor(((offset + plate.length) * 4) / 3) - 1
    return encoded.slice(start, end)
  })

/** Every payload anywhere in a history (inputs, results, headers, memo, failures…). */
const payloadsOf = (history: unknown): Array<Payload> => {
  const found: Array<Payload> = []
  const walk = (value: unknown) => {
    if (value === null || typeof value !== "object") return
    if (value instanceof Uint8Array) return
    const record = value as Record<string, unknown>
    if ("metadata" in record && "data" in record && record.data instanceof Uint8Array) {
      found.push(record as Payload)
      return
    }
    for (const inner of Object.values(record)) walk(inner)
  }
  walk(history)
  return found
}
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

  it("hold no plate: none of the live tests' plates, nor any plate their encrypted payloads hold, in clear or in base64", async () => {
    const codec = makeAesGcmCodec(parseKeyRing(LIVE_CODEC_KEYS))
    const found = new Set<string>()
    const raws = new Map<string, string>()
    for (const name of fixtures) {
      const raw = await Fs.readFile(Path.join(FIXTURES, name), "utf8")
      raws.set(name, raw)
      const history = historyFromJSON(JSON.parse(raw))
      const clear = await codec.decode(payloadsOf(history))
      for (const payload of clear) for (const plate of platesIn(Buffer.from(payload.data ?? []).toString("utf8"))) found.add(plate)
    }
    // the check is real: the vehicle search and the report carry their vehicle, plate included, encrypted
    expect([...found]).toEqual(expect.arrayContaining(["AB202CD", "AE111FG"]))
    for (const plate of [...LIVE_PLATES, ...found]) {
      for (const [name, raw] of raws) {
        expect(raw, `${plate} in ${name}`).not.toContain(plate)
        for (const encoded of base64Forms(plate)) expect(raw, `${plate} as base64 in ${name}`).not.toContain(encoded)
      }
    }
  })

  it.each(fixtures)("%s replays against the current workflows", async (name) => {
    const raw = await Fs.readFile(Path.join(FIXTURES, name), "utf8")
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
