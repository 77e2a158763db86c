/**
 * Settings that contradict each other are refused when the configuration is read, with a message
 * naming them, rather than by a library deep in start-up with a stack trace. The limits of
 * DESIGN §12 are settings, with the documented defaults.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { AppConfig } from "../../src/platform/config/Config.js"
import { json, makeTestApp, testConfig, withKey } from "../support/TestApp.js"

/** The configuration as these settings give it, or how it was refused. */
const read = (config: Record<string, string>) => Effect.exit(Effect.service(AppConfig).pipe(Effect.provide(testConfig(config))))

describe("configuration", () => {
  it.effect("a headers timeout longer than the request timeout is refused, naming both settings", () =>
    Effect.gen(function*() {
      const exit = yield* read({ HTTP_HEADERS_TIMEOUT_MS: "5000", HTTP_REQUEST_TIMEOUT_MS: "1000" })
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(exit)).toContain("HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS")
    }))

  it.effect("equal timeouts are accepted", () =>
    Effect.gen(function*() {
      const exit = yield* read({ HTTP_HEADERS_TIMEOUT_MS: "1000", HTTP_REQUEST_TIMEOUT_MS: "1000" })
      expect(Exit.isSuccess(exit) && exit.value.http).toEqual({
        headersTimeoutMs: 1000, requestTimeoutMs: 1000, keepAliveTimeoutMs: 5000, maxHeaderBytes: 16384
      })
    }))

  it.effect("the limits' defaults", () =>
    Effect.gen(function*() {
      const exit = yield* read({})
      expect(Exit.isSuccess(exit) && {
        requestBody: exit.value.requestBody,
        upstream: exit.value.upstream,
        webhookAttempt: exit.value.webhookAttempt,
        shutdownDrainMs: exit.value.shutdownDrainMs
      }).toEqual({
        requestBody: { maxBytes: 65536, maxDepth: 32 },
        upstream: { vehicleTimeoutMs: 3000, moduleTimeoutMs: 8000, maxBodyBytes: 1048576, breakerFailures: 5, breakerCooldownMs: 30000 },
        webhookAttempt: { timeoutMs: 10000, responseMaxBytes: 65536 },
        shutdownDrainMs: 10000
      })
    }))

  it.effect("a source or webhook deadline that would not fit in its activity's timeout is refused", () =>
    Effect.gen(function*() {
      expect(String(yield* read({ MODULE_UPSTREAM_TIMEOUT_MS: "12000" })))
        .toContain("VEHICLE_UPSTREAM_TIMEOUT_MS and MODULE_UPSTREAM_TIMEOUT_MS must be at most 10 s")
      expect(String(yield* read({ WEBHOOK_TIMEOUT_MS: "16000" }))).toContain("WEBHOOK_TIMEOUT_MS must be at most 15 s")
      expect(Exit.isSuccess(yield* read({ MODULE_UPSTREAM_TIMEOUT_MS: "10000", WEBHOOK_TIMEOUT_MS: "15000" }))).toBe(true)
    }))

  it("REQUEST_BODY_MAX_BYTES and REQUEST_JSON_MAX_DEPTH change what the input layer accepts", async () => {
    const app = await makeTestApp({ config: { REQUEST_BODY_MAX_BYTES: "1024", REQUEST_JSON_MAX_DEPTH: "3" } })
    try {
      const account = await app.createAccount()
      const patch = (body: string) =>
        app.sandbox("/v2/webhooks/config", withKey(account.sandbox.key, {
          method: "PATCH",
          headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
          body
        }))
      const large = await patch(JSON.stringify({ enabled: false, pad: "x".repeat(1024) }))
      expect(large.status).toBe(413)
      expect((await json(large)).error.message).toBe("The body is larger than 1 KiB")
      const deep = await patch(JSON.stringify({ enabled: false, x: [[[1]]] }))
      expect(deep.status).toBe(400)
      expect((await json(deep)).error.message).toBe("Invalid request: JSON nested deeper than 3 levels")
      expect((await patch(JSON.stringify({ enabled: false }))).status).toBe(200)
    } finally {
      await app.dispose()
    }
  })
})
