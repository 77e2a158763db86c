/**
 * An operation's life in the real server's JSON log (`LOG_FORMAT=json`): the lines of one
 * operation are found by its `operationId` field alone (what `grep op_…` does to the log), and
 * they tell its story: its creation (kind, account, modules), each module's outcome, its final
 * status with its duration, and its webhook delivery's attempts and end (with the delivery id).
 * Nothing in the whole log shows the plate, the key, the webhook secret or the webhook URL.
 *
 * The sandbox's `222` plates are its partial scenario: the first module fails (after its
 * retries), the second answers with reduced coverage, the third answers in full. The receiver
 * answers the first attempt 503, so the delivery has a failed attempt before it is processed.
 *
 * Then, in-process on the activities both engines run: an activity run again (an engine's retry)
 * logs nothing again when it changed nothing (a module already recorded, an operation already
 * final, a delivery already settled).
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { ActivitiesLive } from "../../src/ActivitiesLive.js"
import { OperationActivities } from "../../src/operations/Activities.js"
import { pgClientLayer } from "../../src/platform/db/Database.js"
import { loggerLayer } from "../../src/platform/observability/Logging.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import type { ModuleName } from "../../workflows/shared.js"
import { DELIVERY_RETRY } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { insertOperation as insertRow } from "../support/Operations.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { json, testConfig } from "../support/TestApp.js"
import { FAST_RETRY, makeTlsFixture, type Receiver, startReceiver, type TlsFixture, trustingReceiver } from "../support/WebhookReceiver.js"

const PLATE = "AB222CD"
const HOOK_PATH = "/operation-log"

type Line = Record<string, unknown> & { readonly message: string }

/** Every line of the output that is a JSON object, parsed (failing on one that does not parse). */
const jsonLines = (output: string): Array<Line> =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => {
    try {
      return JSON.parse(line) as Line
    } catch {
      throw new Error(`a log line starting with { is not JSON: ${line}`)
    }
  })

let tls: TlsFixture
let receiver: Receiver
let server: ServerProcess
let account: { id: string; key: string }

beforeAll(async () => {
  tls = await makeTlsFixture()
  receiver = await startReceiver(tls)
  const env = {
    DATABASE_URL: await freshDatabase(),
    ...trustingReceiver(tls),
    ...FAST_RETRY,
    LOG_FORMAT: "json",
    LOG_LEVEL: "info",
    SANDBOX_MODULE_LATENCY_MS: "20",
    SOURCE_RETRY_INITIAL_MS: "20"
  }
  const made = await cliAccount(env, { owner: "Operation log", plan: "custom", custom: ["--rpm", "unlimited"], environments: ["sandbox"] })
  account = { id: made.id, key: made.keys.sandbox }
  server = await startServer(env)
}, 60_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  await receiver?.close()
  await tls?.dispose()
})

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${server.sandboxUrl}${path}`, { ...init, headers: { "x-api-key": account.key, "content-type": "application/json", ...init.headers } })

describe("an operation's life in the JSON log", () => {
  it("is found by its operationId: creation, each module, the end with its duration, the delivery's attempts and end", async () => {
    const configured = await call("/v2/webhooks/config", { method: "PATCH", body: JSON.stringify({ url: `${receiver.url}${HOOK_PATH}`, enabled: true }) })
    expect(configured.status).toBe(200)
    const { secret } = await json(configured)
    expect(typeof secret).toBe("string")
    receiver.script(HOOK_PATH, [503, 200])

    const posted = performance.now()
    const created = await call(`/v2/vehicles/${PLATE}/modules`, { method: "POST", body: JSON.stringify({ modules: ["fines", "vtv", "tax_debt"] }) })
    expect(created.status).toBe(202)
    const { id } = await json(created)
    expect(id).toMatch(/^op_/)

    // the story ends with the delivery's end: wait for it in the log
    const ofOperation = () => jsonLines(server.output()).filter((line) => line.operationId === id)
    await waitFor(() => (ofOperation().some((line) => line.message === "delivery processed") ? true : undefined), "the delivery's end in the log", 60_000)
    const elapsedMs = performance.now() - posted
    const [request] = receiver.at(HOOK_PATH).slice(-1)
    const deliveryId = request!.headers["x-service-delivery"]
    expect(typeof deliveryId).toBe("string")

    // everything written from here on is in what is read (the shutdown flushes the rest)
    expect(await server.stop("SIGTERM")).toBe(0)
    const output = server.output()
    const all = jsonLines(output)
    const lines = all.filter((line) => line.operationId === id)
    const at = (line: Line) => all.indexOf(line)
    for (const line of lines) expect(line.level, JSON.stringify(line)).toBe("info")

    // creation: once, with its kind, account and modules (canonical order)
    const creations = lines.filter((line) => line.message === "operation created")
    expect(creations).toHaveLength(1)
    const creation = creations[0]!
    expect(creation).toMatchObject({
      operationId: id,
      accountId: account.id,
      kind: "modules",
      modules: "fines,vtv,tax_debt",
      environment: "sandbox",
      apiVersion: "v2"
    })
    expect(typeof creation.requestId).toBe("string")

    // one line per module outcome, after the creation
    const moduleLines = lines.filter((line) => line.message.startsWith("module "))
    expect(moduleLines.map((line) => line.module).sort()).toEqual(["fines", "tax_debt", "vtv"])
    const outcome = (module: string) => moduleLines.find((line) => line.module === module)!
    expect(outcome("fines")).toMatchObject({
      message: "module fines failed: module_unavailable",
      moduleStatus: "failed",
      errorCode: "module_unavailable",
      retryable: true,
      accountId: account.id
    })
    expect(outcome("vtv")).toMatchObject({
      message: "module vtv partially completed",
      moduleStatus: "partial",
      warnings: "reduced_coverage",
      accountId: account.id
    })
    expect(outcome("tax_debt")).toMatchObject({ message: "module tax_debt completed", moduleStatus: "completed", accountId: account.id })
    for (const line of moduleLines) expect(at(line)).toBeGreaterThan(at(creation))

    // the end: once, with its status and a duration (from the creation) in milliseconds
    const ends = lines.filter((line) => /^operation .* in \d+ ms$/.test(line.message))
    expect(ends).toHaveLength(1)
    const end = ends[0]!
    expect(end).toMatchObject({ status: "partial", kind: "modules", accountId: account.id })
    expect(typeof end.durationMs).toBe("number")
    expect(end.message).toBe(`operation partially completed in ${end.durationMs} ms`)
    expect(end.durationMs as number).toBeGreaterThan(0)
    expect(end.durationMs as number).toBeLessThan(elapsedMs + 1_000)
    for (const line of moduleLines) expect(at(end)).toBeGreaterThan(at(line))

    // the delivery: attempt 1 refused (503), attempt 2 taken, then its end, each with its ids
    const deliveryLines = all.filter((line) => line.deliveryId === deliveryId)
    const attempts = deliveryLines.filter((line) => line.message.startsWith("delivery attempt "))
    expect(attempts).toEqual([
      expect.objectContaining({ message: "delivery attempt 1 failed: HTTP 503", attempt: 1, outcome: "failed", responseStatus: 503 }),
      expect.objectContaining({ message: "delivery attempt 2 succeeded: HTTP 200", attempt: 2, outcome: "succeeded", responseStatus: 200 })
    ])
    const settled = deliveryLines.filter((line) => line.message === "delivery processed")
    expect(settled).toEqual([expect.objectContaining({ status: "processed", attempts: 2 })])
    for (const line of [...attempts, ...settled]) {
      expect(line, line.message).toMatchObject({ level: "info", operationId: id, accountId: account.id, eventType: "modules.completed" })
      expect(at(line), line.message).toBeGreaterThan(at(end))
    }
    expect(at(settled[0]!)).toBeGreaterThan(at(attempts[1]!))
    // all of them are the operation's lines too: grep op_… finds the delivery's story with it
    for (const line of [...attempts, ...settled]) expect(lines).toContain(line)

    // nothing of the whole log shows the plate, the key, the secret or the webhook URL
    for (const secretText of [PLATE, PLATE.toLowerCase(), account.key, secret, `${receiver.url}${HOOK_PATH}`]) {
      expect(output).not.toContain(secretText)
    }
  }, 90_000)
})

/** The account the activities' operations belong to, on a database of their own. */
class ActivitiesAccount extends Context.Service<ActivitiesAccount, { readonly id: string }>()("test/ActivitiesAccount") {}

/** What the activities logged, as the JSON log's lines. */
const logged: Array<Line> = []

/**
 * The activities as both engines get them (src/ActivitiesLive.ts), and no engine: nothing
 * else runs them. Their lines go to `logged`.
 */
const ActivitiesFixture = Layer.unwrap(Effect.gen(function*() {
  const databaseUrl = yield* Effect.promise(freshDatabase)
  const { id } = yield* Effect.promise(() => cliAccount({ DATABASE_URL: databaseUrl }, { owner: "Activities", plan: "custom", environments: [] }))
  return Layer.mergeAll(
    ActivitiesLive.pipe(Layer.provide(pgClientLayer(Redacted.make(databaseUrl), 4))),
    Layer.succeed(ActivitiesAccount, { id }),
    loggerLayer("json", "Info", (line) => logged.push(JSON.parse(line)))
  ).pipe(Layer.provide(testConfig()))
}))

// durations are measured from rows stamped by the real clock: no TestClock
layer(ActivitiesFixture, { excludeTestServices: true, timeout: "60 seconds" })("an activity run again", (it) => {
  /** Runs `f` on the activities; the lines it logged. */
  const run = <A, E>(f: (a: OperationActivities["Service"]) => Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const from = logged.length
      const value = yield* Effect.flatMap(Effect.service(OperationActivities), f)
      return { value, lines: logged.slice(from) }
    })

  /** An active modules operation created `ageMs` ago (no engine runs it here). */
  const insertOperation = (modules: ReadonlyArray<ModuleName>, ageMs: number) =>
    Effect.gen(function*() {
      const id = `op_log_${randomUUID().replaceAll("-", "")}`
      yield* insertRow({
        id,
        accountId: (yield* ActivitiesAccount).id,
        environment: "sandbox",
        kind: "modules",
        apiVersion: "v2",
        plate: "AB000LG",
        modulesKey: modules.join(","),
        input: { kind: "modules", modules },
        createdAt: new Date(Date.now() - ageMs)
      }).pipe(Effect.orDie)
      return id
    })

  const insertDelivery = (operationId: string) =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      return yield* repo.insertDelivery({
        id: randomUUID(),
        accountId: (yield* ActivitiesAccount).id,
        environment: "sandbox",
        apiVersion: "v2",
        eventType: "modules.completed",
        operationId,
        body: "{}",
        sendsWhenDisabled: false,
        createdAt: new Date()
      })
    })

  const completed = { status: "completed", data: { total: 0, items: [] }, error: null, warnings: [] } as const

  it.effect("records and finalises once, and logs once", () =>
    Effect.gen(function*() {
      const accountId = (yield* ActivitiesAccount).id
      const id = yield* insertOperation(["fines", "vtv"], 1_500)
      const first = yield* run((a) => a.recordModule({ operationId: id, module: "fines", outcome: completed }))
      expect(first.lines).toEqual([
        expect.objectContaining({ message: "module fines completed", operationId: id, accountId, module: "fines", moduleStatus: "completed" })
      ])
      expect((yield* run((a) => a.recordModule({ operationId: id, module: "fines", outcome: completed }))).lines).toEqual([])

      yield* run((a) => a.recordModule({ operationId: id, module: "vtv", outcome: completed }))
      const end = yield* run((a) => a.finalizeOperation({ operationId: id, status: "completed" }))
      expect(end.lines).toHaveLength(1)
      expect(end.lines[0]).toMatchObject({ level: "info", operationId: id, accountId, kind: "modules", status: "completed" })
      expect(end.lines[0]!.durationMs as number).toBeGreaterThanOrEqual(1_500)
      expect(end.lines[0]!.message).toBe(`operation completed in ${end.lines[0]!.durationMs} ms`)
      expect((yield* run((a) => a.finalizeOperation({ operationId: id, status: "completed" }))).lines).toEqual([])
      // the reconciler's finalisation of a lost workflow: nothing to do on a final operation
      expect(yield* run((a) => a.finalizeLost(id))).toEqual({ value: false, lines: [] })
    }))

  it.effect("a lost workflow's operation: the modules it fails and its end, once", () =>
    Effect.gen(function*() {
      const accountId = (yield* ActivitiesAccount).id
      const id = yield* insertOperation(["fines", "vtv"], 100)
      yield* run((a) => a.recordModule({ operationId: id, module: "fines", outcome: completed }))
      const lost = yield* run((a) => a.finalizeLost(id))
      expect(lost.value).toBe(true)
      expect(lost.lines).toEqual([
        expect.objectContaining({ message: "module vtv failed: module_unavailable", operationId: id, accountId, retryable: true }),
        expect.objectContaining({ operationId: id, accountId, status: "partial", lost: true, durationMs: expect.any(Number) })
      ])
      expect(yield* run((a) => a.finalizeLost(id))).toEqual({ value: false, lines: [] })
    }))

  it.effect("a delivery's end is logged by what ended it, once", () =>
    Effect.gen(function*() {
      const accountId = (yield* ActivitiesAccount).id
      const id = yield* insertOperation(["fines"], 0)
      // no webhook configured: the attempt fails for good
      const deliveryId = yield* insertDelivery(id)
      const attempt = run((a) => Effect.result(a.attemptDelivery({ deliveryId, attempt: 1, policy: DELIVERY_RETRY })))
      const first = yield* attempt
      const ids = { deliveryId, operationId: id, accountId, eventType: "modules.completed" }
      expect(first.lines).toEqual([
        expect.objectContaining({ ...ids, message: "delivery attempt 1 failed: the webhook is disabled or has no URL", attempt: 1, outcome: "failed" }),
        expect.objectContaining({ ...ids, message: "delivery failed after 1 attempt: the webhook is disabled or has no URL", status: "failed" })
      ])
      expect(first.lines[0]).not.toHaveProperty("responseStatus")
      // settled: another attempt makes none, and settling changes nothing
      expect((yield* attempt).lines).toEqual([])
      expect((yield* run((a) => a.settleDelivery({ deliveryId }))).lines).toEqual([])

      // a delivery whose attempts failed inside the activity: settling it is its end
      const other = yield* insertOperation(["vtv"], 0)
      const settledId = yield* insertDelivery(other)
      const settled = yield* run((a) => a.settleDelivery({ deliveryId: settledId }))
      expect(settled.lines).toEqual([expect.objectContaining({
        deliveryId: settledId,
        operationId: other,
        accountId,
        status: "failed",
        message: "delivery failed after 0 attempts: the delivery's attempts ran out"
      })])
      expect((yield* run((a) => a.settleDelivery({ deliveryId: settledId }))).lines).toEqual([])
    }))
})
