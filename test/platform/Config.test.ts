/**
 * Settings that contradict each other are refused when the configuration is read, with a message
 * naming them, rather than by a library deep in start-up with a stack trace.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { AppConfig } from "../../src/platform/Config.js"
import { testConfig } from "../support/TestApp.js"

const read = (config: Record<string, string>) => Effect.runPromiseExit(AppConfig.pipe(Effect.provide(testConfig(config))))

describe("configuration", () => {
  it("a headers timeout longer than the request timeout is refused, naming both settings", async () => {
    const exit = await read({ HTTP_HEADERS_TIMEOUT_MS: "5000", HTTP_REQUEST_TIMEOUT_MS: "1000" })
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain("HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS")
  })

  it("equal timeouts are accepted", async () => {
    const exit = await read({ HTTP_HEADERS_TIMEOUT_MS: "1000", HTTP_REQUEST_TIMEOUT_MS: "1000" })
    expect(Exit.isSuccess(exit) && exit.value.http).toEqual({
      headersTimeoutMs: 1000, requestTimeoutMs: 1000, keepAliveTimeoutMs: 5000, maxHeaderBytes: 16384
    })
  })
})
