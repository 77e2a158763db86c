/**
 * Against a real Temporal server (`TEMPORAL_ADDRESS`, or the Java test server CI starts; see
 * `test/support/temporalSetup.ts`): the API (`node src/start.js`) and the worker
 * (`node worker/start.js`) run as the operators run them, with encrypted payloads, on their own
 * task queues, delivering to a real HTTPS receiver. Without a server this file skips.
 *
 * With EXPORT_HISTORIES=DIR it also writes the histories of the runs it made to DIR, as the
 * replay fixtures of `test/workflows/fixtures/` were made.
 *
 * The traces are checked in this process: an engine and a worker on one traced runtime, spans
 * kept in memory.
 */
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Client, Connection, type WorkflowExecutionDescription } from "@temporalio/client"
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ActivitiesLive } from "../../src/ActivitiesLive.js"
import { clientGateway, makeTemporalEngine, TemporalGateway } from "../../src/operations/TemporalEngine.js"
import { AppConfig } from "../../src/platform/config/Config.js"
import { plateHash } from "../../src/platform/ids/PlateHash.js"
import { dataConverterOf } from "../../src/platform/temporal/Temporal.js"
import { TemporalSecrets, temporalSecretsLayer } from "../../src/platform/temporal/TemporalSecrets.js"
import { makeAesGcmCodec, parseKeyRing } from "../../src/platform/temporal/TemporalCodec.js"
import { TelemetryLive } from "../../src/platform/observability/Telemetry.js"
import { createWorkers, workflowCode } from "../../worker/Workers.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"
import { freshDatabase, freshDatabaseLayer } from "../support/Postgres.js"
import { json, testConfig } from "../support/TestApp.js"
import { runVda, type ServerProcess, startServer, startWorker, waitFor, type WorkerProcess } from "../support/Processes.js"
import {
  makeTlsFixture,
  type Receiver,
  signatureIsValid,
  startReceiver,
  type TlsFixture,
  trustingReceiver
} from "../support/WebhookReceiver.js"
import { insertOperation, modulesOperation } from "../support/Operations.js"

const address = inject("temporal").address
const exportDir = process.env.EXPORT_HISTORIES


type Env = "production" | "sandbox"
const FINAL = ["completed", "partial", "failed"]

describe.skipIf(address === undefined)("with a live Temporal server", () => {
  const taskQueue = `vda-live-${Date.now()}`
  let tls: TlsFixture
  let receiver: Receiver
  let hangingUpstream: Http.Server
  /** A production VTV source that holds each lookup until the test lets it answer. */
  let gatedUpstream: Http.Server
  let held: Array<Http.ServerResponse> = []
  let env: Record<string, string>
  let server: ServerProcess
  let worker: WorkerProcess
  let connection: Connection
  let client: Client
  const keys = {} as Record<Env, string>
  let secret: Record<Env, string>
  let accountId: string

  const call = (environment: Env, path: string, init: RequestInit = {}, on = server) =>
    fetch(`${environment === "production" ? on.productionUrl : on.sandboxUrl}${path}`, {
      ...init,
      headers: { "x-api-key": keys[environment], "content-type": "application/json", ...init.headers }
    })

  const poll = (environment: Env, id: string, deadlineMs = 60_000) =>
    waitFor(async () => {
      const body = await json(await call(environment, `/v2/operations/${id}`))
      return FINAL.includes(body.status) ? body : undefined
    }, `operation ${id} to end`, deadlineMs)

  const deliveries = async (environment: Env) => (await json(await call(environment, "/v2/webhooks/deliveries?limit=100"))).deliveries

  const hookTo = async (environment: Env, path: string) => {
    const res = await call(environment, "/v2/webhooks/config", {
      method: "PATCH",
      body: JSON.stringify({ url: `${receiver.url}${path}`, enabled: true })
    })
    expect(res.status).toBe(200)
  }

  const exportHistory = async (name: string, workflowId: string) => {
    if (exportDir === undefined) return
    const history = await client.workflow.getHandle(workflowId).fetchHistory()
    await Fs.mkdir(exportDir, { recursive: true })
    await Fs.writeFile(Path.join(exportDir, `${name}.json`), historyToJSON(history))
  }

  beforeAll(async () => {
    tls = await makeTlsFixture()
    receiver = await startReceiver(tls)
    // a production fines source that never answers: its operations stay running until terminated
    hangingUpstream = Http.createServer(() => {})
    await new Promise<void>((resolve) => hangingUpstream.listen(0, "127.0.0.1", resolve))
    gatedUpstream = Http.createServer((_, response) => void held.push(response))
    await new Promise<void>((resolve) => gatedUpstream.listen(0, "127.0.0.1", resolve))
    env = {
      DATABASE_URL: await freshDatabase(),
      WORKFLOW_ENGINE: "temporal",
      TEMPORAL_ADDRESS: address!,
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS,
      PLATE_HASH_SALT: "live-test-salt",
      TEMPORAL_RECONCILE_INTERVAL_MS: "500",
      TEMPORAL_STALE_AFTER_MS: "2000",
      SANDBOX_MODULE_LATENCY_MS: "100",
      SOURCE_RETRY_INITIAL_MS: "100",
      WEBHOOK_RETRY_INITIAL_MS: "300",
      WEBHOOK_RETRY_COEFFICIENT: "1",
      ...trustingReceiver(tls),
      FINES_UPSTREAM_URL: `http://127.0.0.1:${(hangingUpstream.address() as Net.AddressInfo).port}`,
      VTV_UPSTREAM_URL: `http://127.0.0.1:${(gatedUpstream.address() as Net.AddressInfo).port}`,
      WORKER_ADMIN_PORT: "0",
      CODEC_SERVER_TOKEN: "live-test-token",
      CODEC_SERVER_PORT: "0"
    }
    const account = JSON.parse((await runVda(["accounts", "create", "--owner", "Live", "--plan", "custom", "--json"], env)).stdout)
    accountId = account.id
    await runVda(["accounts", "set-custom", account.id, "--rpm", "unlimited"], env)
    for (const environment of ["production", "sandbox"] as const) {
      const created = await runVda(["keys", "create", "--account", account.id, "--environment", environment, "--json"], env)
      keys[environment] = JSON.parse(created.stdout).key
    }
    ;[server, worker] = await Promise.all([startServer(env), startWorker(env)])
    secret = {
      production: (await json(await call("production", "/v2/webhooks/config"))).secret,
      sandbox: (await json(await call("sandbox", "/v2/webhooks/config"))).secret
    }
    connection = await Connection.connect({ address: address! })
    client = new Client({ connection, dataConverter: { payloadCodecs: [makeAesGcmCodec(parseKeyRing(LIVE_CODEC_KEYS))] } })
  }, 180_000)

  afterAll(async () => {
    await worker?.stop()
    await server?.stop()
    await connection?.close()
    hangingUpstream?.closeAllConnections()
    await new Promise((resolve) => hangingUpstream?.close(resolve))
    gatedUpstream?.closeAllConnections()
    await new Promise((resolve) => gatedUpstream?.close(resolve))
    await receiver?.close()
    await tls?.dispose()
  })

  it("the API is ready with Temporal as its engine, and says so", async () => {
    const readiness = await fetch(`${server.productionUrl}/readyz`)
    expect(readiness.status).toBe(200)
    expect(await readiness.json()).toMatchObject({ status: "ready", checks: { workflowEngine: { status: "up", engine: "temporal" } } })
  })

  const hash = (plate: string) => plateHash(Redacted.make(env.PLATE_HASH_SALT!), plate)
  const attributesOf = (description: WorkflowExecutionDescription) =>
    Object.fromEntries(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]))

  /** The workflow's description once it has closed (the database may show the outcome a moment earlier). */
  const closed = (workflowId: string) =>
    waitFor(async () => {
      const description = await client.workflow.getHandle(workflowId).describe()
      return description.status.name === "RUNNING" ? undefined : description
    }, `${workflowId} to close`)

  it("runs a full modules operation on the worker; the workflow is labelled, and its history holds no plate in clear", async () => {
    await hookTo("sandbox", "/full")
    const created = await call("sandbox", "/v2/vehicles/AB123CD/modules", {
      method: "POST",
      body: JSON.stringify({ modules: ["fines", "vtv", "tax_debt", "gnc"] })
    })
    expect(created.status).toBe(202)
    const { id } = await json(created)
    const done = await poll("sandbox", id)
    expect(done.status).toBe("completed")
    for (const module of ["fines", "vtv", "tax_debt", "gnc"]) expect(done.modules[module].status).toBe("completed")

    // the id operators read: modules/{environment}/{account}/{plate hash}/{modules}/{operation}
    const workflowId = `modules/sandbox/${accountId}/${hash("AB123CD")}/fines+vtv+tax_debt+gnc/${id}`
    const description = await closed(workflowId)
    expect(description.status.name).toBe("COMPLETED")
    expect(description.taskQueue).toBe(`${taskQueue}-operations`)
    expect(attributesOf(description)).toMatchObject({
      VdaAccountId: accountId,
      VdaEnvironment: "sandbox",
      VdaKind: "modules",
      VdaModules: "fines+vtv+tax_debt+gnc",
      VdaPlateHash: hash("AB123CD"),
      VdaStatus: "completed"
    })
    expect(await description.memo).toMatchObject({ subject: id, kind: "modules", plateHash: hash("AB123CD") })
    expect(await description.staticSummary()).toBe(`modules · fines+vtv+tax_debt+gnc · sandbox · ${accountId} · ${id}`)
    const history = await client.workflow.getHandle(workflowId).fetchHistory()
    const raw = historyToJSON(history)
    expect(raw).not.toContain("AB123CD")
    expect(Buffer.from(raw).toString("base64")).not.toContain(Buffer.from("AB123CD").toString("base64"))
    await exportHistory("modules-completed", workflowId)

    // its event reached the receiver, signed; the delivery ran on the deliveries queue
    const [request] = await waitFor(() => (receiver.at("/full").length > 0 ? receiver.at("/full") : undefined), "the event")
    expect(signatureIsValid(secret.sandbox, request!)).toBe(true)
    const event = JSON.parse(request!.rawBody.toString("utf8"))
    expect(event).toMatchObject({ type: "modules.completed", data: { id, status: "completed" } })
    const delivery = await client.workflow.getHandle(`webhook-delivery/${event.id.replace("evt_", "")}`).describe()
    expect(delivery.taskQueue).toBe(`${taskQueue}-deliveries`)
    expect(attributesOf(delivery)).toMatchObject({ VdaAccountId: accountId, VdaEnvironment: "sandbox", VdaKind: "delivery" })
    expect((await closed(delivery.workflowId)).status.name).toBe("COMPLETED")
    await exportHistory("delivery-processed", delivery.workflowId)
  }, 120_000)

  it("reuses an identical active module operation (200, nothing charged), and runs a new one once it is final", async () => {
    const request = () => call("production", "/v2/vehicles/AD321BC/modules", { method: "POST", body: JSON.stringify({ modules: ["vtv"] }) })
    const usedModules = async () => (await json(await call("production", "/v2/usage"))).data.moduleQueries.used as number
    const before = await usedModules()
    const first = await request()
    expect(first.status).toBe(202)
    const { id } = await json(first)
    // the worker's lookup is held at the source: the operation stays active
    await waitFor(() => (held.length > 0 ? true : undefined), "the lookup to reach the source")
    const again = await request()
    expect(again.status).toBe(200)
    expect((await json(again)).id).toBe(id)
    expect(await usedModules()).toBe(before + 1)

    for (const response of held.splice(0)) response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items: [], coverage: "full" }))
    expect((await poll("production", id)).status).toBe("completed")
    const workflowId = `modules/production/${accountId}/${hash("AD321BC")}/vtv/${id}`
    expect((await closed(workflowId)).status.name).toBe("COMPLETED")

    // final now: the same request is a new operation, charged again
    const next = await request()
    expect(next.status).toBe(202)
    expect((await json(next)).id).not.toBe(id)
    expect(await usedModules()).toBe(before + 2)
    await waitFor(() => (held.length > 0 ? true : undefined), "the second lookup")
    for (const response of held.splice(0)) response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items: [], coverage: "full" }))
  }, 120_000)

  it("runs an onMiss=search vehicle search to its result", async () => {
    await hookTo("sandbox", "/search")
    const created = await call("sandbox", "/v2/vehicles/AB202CD?onMiss=search")
    expect(created.status).toBe(202)
    const { id } = await json(created)
    const done = await poll("sandbox", id)
    expect(done).toMatchObject({ kind: "vehicle", status: "completed", result: { success: true, found: true } })
    const [request] = await waitFor(() => (receiver.at("/search").length > 0 ? receiver.at("/search") : undefined), "the event")
    expect(JSON.parse(request!.rawBody.toString("utf8"))).toMatchObject({ type: "vehicle.completed", data: { id } })
    const workflowId = `vehicle/sandbox/${accountId}/${hash("AB202CD")}/${id}`
    expect(attributesOf(await closed(workflowId))).toMatchObject({ VdaKind: "vehicle", VdaStatus: "completed" })
    await exportHistory("vehicle-search", workflowId)
  }, 120_000)

  it("runs a v1 report on the worker: vehicle and modules in parallel, its v1 event delivered", async () => {
    await hookTo("sandbox", "/report")
    const created = await call("sandbox", "/v1/reports", { method: "POST", body: JSON.stringify({ plate: "AE111FG" }) })
    expect(created.status).toBe(202)
    const { data: { id } } = await json(created)
    const done = await waitFor(async () => {
      const body = await json(await call("sandbox", `/v1/reports/${id}`))
      return body.data.completedAt !== null ? body.data : undefined
    }, "the report", 60_000)
    expect(done).toMatchObject({ status: "completed", report: { vehicle: { plate: "AE111FG" }, digest: { currency: "ARS" } } })
    const workflowId = `report/sandbox/${accountId}/${hash("AE111FG")}/${id}`
    const description = await closed(workflowId)
    expect(description.status.name).toBe("COMPLETED")
    expect(attributesOf(description)).toMatchObject({ VdaKind: "report", VdaStatus: "completed", VdaPlateHash: hash("AE111FG") })
    expect(historyToJSON(await client.workflow.getHandle(workflowId).fetchHistory())).not.toContain("AE111FG")
    const [request] = await waitFor(() => (receiver.at("/report").length > 0 ? receiver.at("/report") : undefined), "the event")
    expect(request!.headers["x-service-event"]).toBe("v1.report.completed")
    expect(JSON.parse(request!.rawBody.toString("utf8"))).toMatchObject({ event: "report.completed", id, report: done.report })
    await exportHistory("report-completed", workflowId)
  }, 120_000)

  it("a delivery that succeeds on its third attempt", async () => {
    await hookTo("production", "/third")
    receiver.script("/third", [500, 500, 200])
    const test = await call("production", "/v2/webhooks/test", { method: "POST" })
    expect(test.status).toBe(202)
    const { id } = await json(test)
    const settled = await waitFor(async () => {
      const found = (await deliveries("production")).find((d: { id: string }) => d.id === id)
      return found?.status === "processed" ? found : undefined
    }, "the delivery to be processed", 60_000)
    expect(settled).toMatchObject({ attempts: 3, responseStatus: 200 })
    expect(receiver.at("/third")).toHaveLength(3)
    const description = await closed(`webhook-delivery/${id}`)
    expect(description.status.name).toBe("COMPLETED")
    expect(attributesOf(description)).toMatchObject({ VdaKind: "delivery", VdaStatus: "processed", VdaEnvironment: "production" })
    await exportHistory("delivery-third-attempt", `webhook-delivery/${id}`)
  }, 120_000)

  it("a delivery that fails five times ends failed", async () => {
    await hookTo("production", "/down")
    receiver.script("/down", [503])
    const { id } = await json(await call("production", "/v2/webhooks/test", { method: "POST" }))
    const settled = await waitFor(async () => {
      const found = (await deliveries("production")).find((d: { id: string }) => d.id === id)
      return found?.status === "failed" ? found : undefined
    }, "the delivery to fail", 60_000)
    expect(settled).toMatchObject({ attempts: 5, responseStatus: 503 })
    expect(receiver.at("/down")).toHaveLength(5)
    const description = await closed(`webhook-delivery/${id}`)
    expect(description.status.name).toBe("COMPLETED")
    expect(attributesOf(description)).toMatchObject({ VdaStatus: "failed" })
    await exportHistory("delivery-exhausted", `webhook-delivery/${id}`)
  }, 120_000)

  it("a failed delivery resent from the console runs again as its own workflow (the series' id), with the same event", async () => {
    await hookTo("production", "/resent")
    receiver.script("/resent", [503])
    const { id } = await json(await call("production", "/v2/webhooks/test", { method: "POST" }))
    await waitFor(async () => {
      const found = (await deliveries("production")).find((d: { id: string }) => d.id === id)
      return found?.status === "failed" ? found : undefined
    }, "the delivery to fail", 60_000)
    const first = receiver.at("/resent")[0]!

    // signed in to the console as a person would be, through a one-time link
    const link = JSON.parse((await runVda(["console", "link", "--account", accountId, "--json"], { ...env, PUBLIC_URL: server.productionUrl })).stdout).url
    const signedIn = await fetch(`${server.productionUrl}/console/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: link.split("/console/sign-in/")[1] })
    })
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!
    const page = await (await fetch(`${server.productionUrl}/console/webhooks`, { headers: { cookie } })).text()
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!
    receiver.script("/resent", [200])
    const resent = await fetch(`${server.productionUrl}/console/webhooks/deliveries/${id}/resend`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf })
    })
    expect(resent.status).toBe(303)

    const delivered = await waitFor(async () => {
      const found = (await deliveries("production")).find((d: { id: string }) => d.id === id)
      return found?.status === "processed" ? found : undefined
    }, "the resent delivery to arrive", 60_000)
    expect(delivered).toMatchObject({ attempts: 1, responseStatus: 200 })
    const last = receiver.at("/resent").at(-1)!
    expect(last.headers["x-service-delivery"]).toBe(id)
    expect(JSON.parse(last.rawBody.toString("utf8")).id).toBe(JSON.parse(first.rawBody.toString("utf8")).id)
    expect(signatureIsValid(secret.production, last)).toBe(true)
    const series = await closed(`webhook-delivery/${id}-series-2`)
    expect(series.status.name).toBe("COMPLETED")
    expect(attributesOf(series)).toMatchObject({ VdaStatus: "processed" })
    expect((await closed(`webhook-delivery/${id}`)).status.name).toBe("COMPLETED")
  }, 120_000)

  it("a terminated workflow is found by the reconciler: its operation fails retryably and its event goes out", async () => {
    await hookTo("production", "/terminated")
    const created = await call("production", "/v2/vehicles/AB123CD/modules", { method: "POST", body: JSON.stringify({ modules: ["fines"] }) })
    expect(created.status).toBe(202)
    const { id } = await json(created)
    // the fines upstream hangs: the workflow runs until an operator terminates it
    await waitFor(async () => ((await json(await call("production", `/v2/operations/${id}`))).status === "processing" || undefined), "the operation to run")
    const handle = client.workflow.getHandle(`modules/production/${accountId}/${hash("AB123CD")}/fines/${id}`)
    expect((await handle.describe()).status.name).toBe("RUNNING")
    await handle.terminate("terminated by the live test")
    const done = await poll("production", id, 30_000)
    expect(done.status).toBe("failed")
    expect(done.modules.fines).toEqual({
      status: "failed",
      data: null,
      error: { code: "module_unavailable", message: "fines source unavailable", retryable: true }
    })
    const [request] = await waitFor(() => (receiver.at("/terminated").length > 0 ? receiver.at("/terminated") : undefined), "the event")
    expect(JSON.parse(request!.rawBody.toString("utf8"))).toMatchObject({ type: "modules.failed", data: { id, status: "failed" } })
  }, 120_000)

  it("a start that cannot reach Temporal answers 202 within 3 s; the operation completes once a reachable engine takes over", async () => {
    // an address that accepts connections and never answers
    const blackHole = Net.createServer(() => {})
    await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve))
    const stuck = await startServer({ ...env, TEMPORAL_ADDRESS: `127.0.0.1:${(blackHole.address() as Net.AddressInfo).port}` })
    try {
      const started = Date.now()
      const created = await call("sandbox", "/v2/vehicles/AB987CD/modules", { method: "POST", body: JSON.stringify({ modules: ["vtv"] }) }, stuck)
      const elapsed = Date.now() - started
      expect(created.status).toBe(202)
      expect(elapsed).toBeLessThan(3_000)
      const { id } = await json(created)
      await stuck.stop()
      const done = await poll("sandbox", id, 60_000)
      expect(done.status).toBe("completed")
    } finally {
      if (stuck.child.exitCode === null) await stuck.stop("SIGKILL")
      blackHole.close()
    }
  }, 120_000)
})

describe.skipIf(address === undefined)("traces with a live Temporal server", () => {
  const exporter = new InMemorySpanExporter()
  const runtime = ManagedRuntime.make(Layer.mergeAll(ActivitiesLive, Accounts.layer).pipe(
    Layer.provideMerge(TelemetryLive({ serviceName: "vehicle-data-worker", spanProcessor: new SimpleSpanProcessor(exporter) })),
    Layer.provide(freshDatabaseLayer(4)),
    Layer.provideMerge(temporalSecretsLayer("api")),
    Layer.provideMerge(testConfig({
      TEMPORAL_ADDRESS: address ?? "",
      TEMPORAL_TASK_QUEUE: `vda-trace-${Date.now()}`,
      TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS,
      PLATE_HASH_SALT: "live-test-salt"
    }))
  ))
  let workers: Awaited<ReturnType<typeof createWorkers>>
  let running: Promise<void>
  let connection: Connection

  beforeAll(async () => {
    const config = await runtime.runPromise(AppConfig)
    workers = await createWorkers({ config, secrets: await runtime.runPromise(TemporalSecrets), runtime, workflowBundle: await workflowCode(undefined) })
    running = workers.run()
    connection = await Connection.connect({ address: address! })
  }, 120_000)

  afterAll(async () => {
    await workers?.shutdown()
    await running
    await connection?.close()
    await runtime.dispose()
  })

  const spansNamed = (name: string | RegExp) =>
    exporter.getFinishedSpans().filter((span) => (typeof name === "string" ? span.name === name : name.test(span.name)))
  const one = (name: string): ReadableSpan => {
    const [span, ...more] = spansNamed(name)
    if (span === undefined || more.length > 0) throw new Error(`expected one span ${name}, got ${1 + more.length}`)
    return span
  }
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
  const idOf = (span: ReadableSpan) => span.spanContext().spanId

  it("one trace: request → workflow start → workflow → each activity → the activity's own spans", async () => {
    const { accountId, operationId } = await runtime.runPromise(Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ owner: "Trace", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
      const id = `op_trace_${Date.now().toString(36)}`
      yield* insertOperation(modulesOperation(id, account.id, ["vtv"])).pipe(Effect.orDie)
      return { accountId: account.id, operationId: id }
    }))
    await runtime.runPromise(Effect.gen(function*() {
      const config = yield* AppConfig
      const gateway = clientGateway(connection, { namespace: config.temporal.namespace, dataConverter: dataConverterOf(yield* TemporalSecrets) })
      const engine = yield* makeTemporalEngine.pipe(Effect.provideService(TemporalGateway, gateway))
      yield* engine.start({ kind: "modules", operationId, accountId, environment: "sandbox", plate: "AB123CD", modules: ["vtv"] }).pipe(
        Effect.withSpan("POST /v2/vehicles/{plate}/modules", { kind: "server" })
      )
    }))
    // the workflow's span ends, and reaches the sink, when the workflow completes
    await waitFor(() => (spansNamed("RunWorkflow:modulesOperation").length > 0 || undefined), "the workflow's span", 60_000)

    const request = one("POST /v2/vehicles/{plate}/modules")
    const start = one("StartWorkflow:modulesOperation")
    const workflow = one("RunWorkflow:modulesOperation")
    const traceId = request.spanContext().traceId
    expect(parentOf(start)).toBe(idOf(request))
    expect(parentOf(workflow)).toBe(idOf(start))
    for (const activity of ["markProcessing", "fetchModule", "recordModule", "finalizeOperation", "emitEvent"]) {
      const scheduled = one(`StartActivity:${activity}`)
      const ran = one(`RunActivity:${activity}`)
      expect(parentOf(scheduled), activity).toBe(idOf(workflow))
      expect(parentOf(ran), activity).toBe(idOf(scheduled))
    }
    // the activities' Effect spans (their database calls among them) nest under their activity
    const ranActivities = new Set(spansNamed(/^RunActivity:/).map(idOf))
    const inActivities = exporter.getFinishedSpans().filter((span) => ranActivities.has(parentOf(span) ?? ""))
    expect(inActivities.length).toBeGreaterThan(0)
    const traced = [start, workflow, ...spansNamed(/^(Start|Run)Activity:/), ...inActivities]
    expect(new Set(traced.map((span) => span.spanContext().traceId))).toEqual(new Set([traceId]))
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes))).not.toContain("AB123CD")
  }, 120_000)
})
