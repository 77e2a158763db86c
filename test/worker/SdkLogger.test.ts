/**
 * The Temporal SDK's log lines in the process's format: JSON objects with the SDK's metadata as
 * fields, filtered at the process's level.
 */
import { describe, expect, it } from "vitest"
import { sdkLogger } from "../../worker/SdkLogger.js"

describe("the SDK's logger", () => {
  it("writes JSON lines with the metadata as fields, and drops what is below the level", () => {
    const lines: Array<string> = []
    const logger = sdkLogger("json", "Info", (line) => lines.push(line))
    logger.debug("polling", { taskQueue: "q" })
    logger.info("Worker state changed", { state: "RUNNING", sdkComponent: "worker", attempt: 2, info: { taskQueue: "q" } })
    logger.error("failed", { error: new Error("boom") })
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        level: "info",
        message: "Worker state changed",
        state: "RUNNING",
        sdkComponent: "worker",
        attempt: 2,
        info: "{\"taskQueue\":\"q\"}"
      },
      { timestamp: expect.any(String), level: "error", message: "failed", error: "boom" }
    ])
  })

  it("writes pretty lines when asked", () => {
    const lines: Array<string> = []
    sdkLogger("pretty", "Warn", (line) => lines.push(line)).warn("slow poll", { taskQueue: "vehicle data" })
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/ WARN +slow poll taskQueue="vehicle data"$/)
  })
})
