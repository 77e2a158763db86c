/**
 * Chaos on the Temporal path, against a real Temporal server of this file's own (the Java test
 * server, started from `inject("temporal").runScript`, so stopping it disturbs no other file), with
 * the API (`node src/start.js`) and the worker (`node worker/start.js`) run as operators run them:
 *
 * - the server lost with everything in it (the test server keeps its state in memory: stopped and
 *   started again on the same port, it knows nothing) while operations and deliveries are open;
 * - the worker killed with `kill -9` in the middle of an activity;
 * - the API killed with `kill -9` right after it answered 202.
 *
 * Module lookups go to a production upstream of this file (`GatedUpstream` below) that records
 * every arrival and holds the ones the test asks it to, so the test knows when an activity is in
 * the middle of its call. Every wait polls with a deadline; nothing sleeps for a fixed time.
 *
 * With CHAOS_DEBUG=DIR, each test writes there what its processes printed, the upstream's
 * arrivals, the receiver's requests and the timings measured.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import { Client, Connection } from "@temporalio/client"
import { defineSearchAttributeKey } from "@temporalio/common"
import proto from "@temporalio/proto"
import { Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { plateHash } from "../../src/platform/ids/PlateHash.js"
import { makeAesGcmCodec, parseKeyRing } from "../../src/platform/temporal/TemporalCodec.js"
import { type ModuleName, modulesKey } from "../../workflows/shared.js"
import { ACTIVITY_TIMEOUTS } from "../../src/platform/sandboxSafe/ActivityTimeouts.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"
import { freshDatabase } from "../support/Postgres.js"
import {
  type ChildProcessHandle,
  cliAccount,
  type ServerProcess,
  startServer,
  startWorker,
  waitFor,
  type WorkerProcess
} from "../support/Processes.js"
import { startTemporalServer, type TemporalServer } from "../support/TemporalServer.js"
import { json } from "../support/TestApp.js"
import {
  makeTlsFixture,
  type Receiver,
  type Received,
  signatureIsValid,
  startReceiver,
  type TlsFixture,
  trustingReceiver
} from "../support/WebhookReceiver.js"

const runScript = inject("temporal").runScript

type Env = "production" | "sandbox"
const FINAL = ["completed", "partial", "failed"]
const SALT = "chaos-test-salt"
const HEARTBEAT = proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT
/** A protobuf timestamp in epoch milliseconds. */
const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  t === null || t === undefined ? Number.NaN : Number(String(t.seconds ?? 0)) * 1_000 + Math.floor((t.nanos ?? 0) / 1e6)
const SOURCE_START_TO_CLOSE_MS = ACTIVITY_TIMEOUTS.sourceMs

// ---------------------------------------------------------------------------------------------
// A production module source of ours: `GET /{module}/{PLATE}`, answered `200 {"items":[]}` at
// once, or held until the test releases it. Every arrival is recorded with its time.

interface Arrival {
  readonly key: string
  readonly at: number
  /** Set when the caller went away before it had its answer (its process died, it gave up). */
  abandonedAt?: number
  answeredAt?: number
}

interface GatedUpstream {
  readonly url: string
  readonly arrivals: Array<Arrival>
  /** Arrivals for `module/PLATE`, in order. */
  readonly at: (key: string) => Array<Arrival>
  /** Holds every request for `module/PLATE` from now on, until released. */
  readonly hold: (key: string) => void
  /** Answers the held requests for `key` and stops holding it. */
  readonly release: (key: string) => void
  readonly close: () => Promise<void>
}

const startGatedUpstream = async (): Promise<GatedUpstream> => {
  const arrivals: Array<Arrival> = []
  const holding = new Set<string>()
  const waiting = new Map<string, Array<() => void>>()
  const server = Http.createServer((request, response) => {
    const key = (request.url ?? "/").replace(/^\/+/, "")
    const arrival: Arrival = { key, at: Date.now() }
    arrivals.push(arrival)
    response.on("close", () => {
      if (arrival.answeredAt === undefined) arrival.abandonedAt = Date.now()
    })
    const answer = () => {
      if (response.destroyed || arrival.abandonedAt !== undefined) return
      arrival.answeredAt = Date.now()
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items: [], coverage: "full" }))
    }
    if (!holding.has(key)) return answer()
    waiting.set(key, [...(waiting.get(key) ?? []), answer])
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`,
    arrivals,
    at: (key) => arrivals.filter((a) => a.key === key),
    hold: (key) => void holding.add(key),
    release: (key) => {
      holding.delete(key)
      for (const answer of waiting.get(key) ?? []) answer()
      waiting.delete(key)
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

// ---------------------------------------------------------------------------------------------

const running = (p: ChildProcessHandle | undefined): p is ChildProcessHandle =>
  p !== undefined && p.child.exitCode === null && p.child.signalCode === null

/** Stops a process of ours if it still runs: SIGTERM, then SIGKILL if it has not exited in 15 s. */
const halt = async (p: ChildProcessHandle | undefined) => {
  if (!running(p)) return
  p.child.kill("SIGTERM")
  const timer = setTimeout(() => p.child.kill("SIGKILL"), 15_000)
  await p.exited
  clearTimeout(timer)
}

describe.skipIf(runScript === undefined)("chaos on the Temporal path (a Temporal server of this file's own)", () => {
  let temporal: TemporalServer
  let upstream: GatedUpstream
  let tls: TlsFixture
  let receiver: Receiver
  let databaseUrl: string
  /** An account per test (usage is counted per account), made in beforeAll. */
  const accounts = {} as Record<"restart" | "worker" | "api", { readonly id: string; readonly keys: Record<Env, string> }>

  const hash = (plate: string) => plateHash(Redacted.make(SALT), plate)

  /** The environment of the API and the worker of one test: its own task queue, short reconciler settings. */
  const envFor = (taskQueue: string): Record<string, string> => ({
    DATABASE_URL: databaseUrl,
    WORKFLOW_ENGINE: "temporal",
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS,
    PLATE_HASH_SALT: SALT,
    TEMPORAL_RECONCILE_INTERVAL_MS: "500",
    TEMPORAL_STALE_AFTER_MS: "2000",
    SANDBOX_MODULE_LATENCY_MS: "100",
    SOURCE_RETRY_INITIAL_MS: "100",
    // a delivery whose attempt failed waits 6 s for its next one: long enough to stop the server in
    WEBHOOK_RETRY_INITIAL_MS: "6000",
    WEBHOOK_RETRY_COEFFICIENT: "1",
    // a held lookup has the most the service allows, and held calls never open the breaker
    MODULE_UPSTREAM_TIMEOUT_MS: "10000",
    UPSTREAM_BREAKER_FAILURES: "1000",
    FINES_UPSTREAM_URL: `${upstream.url}/fines`,
    VTV_UPSTREAM_URL: `${upstream.url}/vtv`,
    TAX_DEBT_UPSTREAM_URL: `${upstream.url}/tax_debt`,
    GNC_UPSTREAM_URL: `${upstream.url}/gnc`,
    ...trustingReceiver(tls),
    WORKER_ADMIN_PORT: "0",
    TEMPORAL_WORKER_SHUTDOWN_GRACE_MS: "1000"
  })
  // the codec endpoint (which the worker serves when payloads are encrypted) is not what these tests are about
  const workerEnv = (env: Record<string, string>) => ({ ...env, CODEC_SERVER_PORT: "0", CODEC_SERVER_TOKEN: "chaos-test-codec-token" })

  /** A Temporal client on this file's server (connected for one use: the server may have been replaced). */
  const withClient = async <A>(f: (client: Client) => Promise<A>): Promise<A> => {
    const connection = await Connection.connect({ address: temporal.address })
    try {
      return await f(new Client({ connection, dataConverter: { payloadCodecs: [makeAesGcmCodec(parseKeyRing(LIVE_CODEC_KEYS))] } }))
    } finally {
      await connection.close()
    }
  }

  const api = (on: ServerProcess, account: keyof typeof accounts) => {
    const call = (environment: Env, path: string, init: RequestInit = {}) =>
      fetch(`${environment === "production" ? on.productionUrl : on.sandboxUrl}${path}`, {
        ...init,
        headers: { "x-api-key": accounts[account].keys[environment], "content-type": "application/json", ...init.headers }
      })
    return {
      call,
      createModules: async (plate: string, modules: ReadonlyArray<string>) => {
        const created = await call("production", `/v2/vehicles/${plate}/modules`, { method: "POST", body: JSON.stringify({ modules }) })
        const body = await json(created)
        expect(created.status, JSON.stringify(body)).toBe(202)
        return body.id as string
      },
      operation: async (id: string) => json(await call("production", `/v2/operations/${id}`)),
      final: (id: string, deadlineMs = 60_000) =>
        waitFor(async () => {
          const body = await json(await call("production", `/v2/operations/${id}`))
          return FINAL.includes(body.status) ? body : undefined
        }, `operation ${id} to end`, deadlineMs),
      deliveries: async (environment: Env): Promise<Array<any>> =>
        (await json(await call(environment, "/v2/webhooks/deliveries?limit=100"))).deliveries,
      usage: async (environment: Env) => (await json(await call(environment, "/v2/usage"))).data,
      hookTo: async (environment: Env, path: string) => {
        const res = await call(environment, "/v2/webhooks/config", {
          method: "PATCH",
          body: JSON.stringify({ url: `${receiver.url}${path}`, enabled: true })
        })
        expect(res.status).toBe(200)
        return (await json(res)).secret as string
      },
      sendTest: async (environment: Env) => {
        const res = await call(environment, "/v2/webhooks/test", { method: "POST" })
        expect(res.status).toBe(202)
        return (await json(res)).id as string
      }
    }
  }

  const eventOf = (request: Received) => JSON.parse(request.rawBody.toString("utf8"))
  const operationWorkflowId = (account: keyof typeof accounts, plate: string, modules: ReadonlyArray<ModuleName>, id: string) =>
    `modules/production/${accounts[account].id}/${hash(plate)}/${modulesKey(modules)}/${id}`

  const timings: Record<string, number> = {}
  const debugMarks: Record<string, number> = {}
  const debugDir = process.env.CHAOS_DEBUG
  const dumpForDebugging = (name: string, server?: ServerProcess, worker?: WorkerProcess) => {
    if (debugDir === undefined) return
    Fs.mkdirSync(debugDir, { recursive: true })
    Fs.writeFileSync(`${debugDir}/${name}-api.log`, server?.output() ?? "")
    Fs.writeFileSync(`${debugDir}/${name}-worker.log`, worker?.output() ?? "")
    Fs.writeFileSync(`${debugDir}/${name}.json`, JSON.stringify({
      marks: debugMarks,
      timings,
      upstream: upstream.arrivals,
      receiver: receiver.received.map((r) => ({ path: r.path, at: r.receivedAt, delivery: r.headers["x-service-delivery"] }))
    }, null, 1))
  }
  const arrivalsAfter = (key: string, after: number) => upstream.at(key).filter((a) => a.at > after)

  /** Whether the server takes a start labelled as the API labels its workflows (for a failure's message). */
  const searchAttributesKnown = () =>
    withClient(async (temporalClient) => {
      const workflowId = `chaos-probe-${Date.now()}`
      try {
        const handle = await temporalClient.workflow.start("modulesOperation", {
          taskQueue: "chaos-probe",
          workflowId,
          args: [],
          typedSearchAttributes: [{ key: defineSearchAttributeKey("VdaKind", "KEYWORD"), value: "probe" }]
        })
        await handle.terminate("probe")
        return "the server takes starts with the Vda search attributes"
      } catch (error) {
        const details = (error as { cause?: { details?: string } }).cause?.details ?? ""
        return `the server refuses a start with the Vda search attributes (${(error as Error).message}: ${details})`
      }
    }).catch((error) => `the server could not be asked (${(error as Error).message})`)

  beforeAll(async () => {
    // this file's own server: stopping it (test 1) disturbs no other file
    ;[temporal, upstream, tls, databaseUrl] = await Promise.all([
      startTemporalServer(runScript!),
      startGatedUpstream(),
      makeTlsFixture(),
      freshDatabase()
    ])
    receiver = await startReceiver(tls)
    const env = { DATABASE_URL: databaseUrl }
    const custom = ["--plate-queries", "1000", "--unique-plates", "1000", "--module-queries", "1000", "--rpm", "unlimited"]
    const environments = ["production", "sandbox"] as const
    const [restart, worker, apiAccount] = await Promise.all([
      cliAccount(env, { owner: "Chaos restart", plan: "custom", custom, environments }),
      cliAccount(env, { owner: "Chaos worker", plan: "custom", custom, environments }),
      cliAccount(env, { owner: "Chaos api", plan: "custom", custom, environments })
    ])
    Object.assign(accounts, { restart, worker, api: apiAccount })
  }, 180_000)

  afterAll(async () => {
    await temporal?.stop()
    await upstream?.close()
    await receiver?.close()
    await tls?.dispose()
  })

  it("the Temporal server stopped and started empty while operations and deliveries are open: the reconciler restarts what was lost, every operation ends completed, every delivery is made, nothing is billed twice", async () => {
    const env = envFor(`vda-chaos-restart-${Date.now()}`)
    let server: ServerProcess | undefined
    let worker: WorkerProcess | undefined
    let serverDown = false
    try {
      ;[server, worker] = await Promise.all([startServer(env), startWorker(workerEnv(env))])
      const client = api(server, "restart")
      const secret = { production: await client.hookTo("production", "/restart-prod"), sandbox: await client.hookTo("sandbox", "/restart-sandbox") }

      // production operations whose lookups are held at the upstream; one (C) has a module recorded already
      const requests = [
        { plate: "AC501DE", modules: ["fines", "vtv"], held: ["fines", "vtv"] },
        { plate: "AC502DE", modules: ["tax_debt"], held: ["tax_debt"] },
        { plate: "AC503DE", modules: ["vtv", "gnc"], held: ["vtv"] }
      ] as const
      const heldKeys = requests.flatMap((r) => r.held.map((m) => `${m}/${r.plate}`))
      for (const key of heldKeys) upstream.hold(key)
      const ids: Array<string> = []
      for (const { modules, plate } of requests) ids.push(await client.createModules(plate, modules))
      const workflowIds = requests.map((r, i) => operationWorkflowId("restart", r.plate, r.modules, ids[i]!))
      await waitFor(() => (heldKeys.every((key) => upstream.at(key).length === 1) || undefined), "every held lookup to reach the upstream")
      await waitFor(async () => ((await client.operation(ids[2]!)).modules.gnc.status === "completed" || undefined), "C's gnc to be recorded")
      const firstRuns = await withClient((temporalClient) =>
        Promise.all(workflowIds.map(async (workflowId) => (await temporalClient.workflow.getHandle(workflowId).describe()).runId)))

      // a production delivery in the middle of its first attempt (answered 500 once the server is gone) ...
      let answerFirstAttempt!: () => void
      const firstAttemptAnswered = new Promise<number>((resolve) => (answerFirstAttempt = () => resolve(500)))
      receiver.script("/restart-prod", [() => firstAttemptAnswered, 200])
      const inFlight = await client.sendTest("production")
      await waitFor(() => (receiver.at("/restart-prod").length === 1 || undefined), "the production delivery's first attempt")
      // ... and two sandbox deliveries waiting for their second attempt (their first answered 500)
      receiver.script("/restart-sandbox", [500, 500, 200])
      const waiting = [await client.sendTest("sandbox"), await client.sendTest("sandbox")]
      await waitFor(async () => {
        const found = (await client.deliveries("sandbox")).filter((d) => waiting.includes(d.id))
        return found.length === 2 && found.every((d) => d.status === "pending" && d.attempts === 1 && d.responseStatus === 500) || undefined
      }, "the sandbox deliveries to wait for their next attempt")

      // the server goes, and with it everything it held
      const port = temporal.port
      await temporal.stop()
      serverDown = true
      const stoppedAt = Date.now()
      answerFirstAttempt()
      await waitFor(async () => {
        const found = (await client.deliveries("production")).find((d) => d.id === inFlight)
        return found?.status === "pending" && found.attempts === 1 && found.responseStatus === 500 || undefined
      }, "the in-flight attempt to be recorded failed")
      expect(receiver.at("/restart-sandbox"), "the waiting deliveries' next attempt came before the server was stopped").toHaveLength(2)
      expect(running(worker), `the worker exited when the server went away:\n${worker.output().slice(-3_000)}`).toBe(true)

      // a new, empty server on the same port
      temporal = await startTemporalServer(runScript!, port)
      serverDown = false
      const restartedAt = Date.now()
      debugMarks.stoppedAt = stoppedAt
      debugMarks.restartedAt = restartedAt

      // the reconciler starts the lost operations again: their lookups reach the upstream once more
      await waitFor(
        () => (heldKeys.every((key) => arrivalsAfter(key, restartedAt).length > 0) || undefined),
        "every held lookup to be made again after the restart",
        45_000
      ).catch(async (error) => {
        const refused = server!.output().split("\n").filter((line) => line.includes("not started yet")).slice(-1)[0]
        throw new Error(
          `${error.message}; the worker ${running(worker) ? "runs" : "exited"}; ${await searchAttributesKnown()}; ` +
            `the API's last refused start: ${refused ?? "none"}`
        )
      })
      expect(upstream.at("gnc/AC503DE"), "a module already recorded is not looked up again").toHaveLength(1)
      for (const key of heldKeys) upstream.release(key)

      // every operation ends completed, every module with it
      for (const [i, id] of ids.entries()) {
        const done = await client.final(id)
        expect(done.status, JSON.stringify(done)).toBe("completed")
        for (const module of requests[i]!.modules) expect(done.modules[module].status).toBe("completed")
      }

      // every delivery is made: the events of the three operations, and the three test events
      const processed = (environment: Env, count: number) =>
        waitFor(async () => {
          const all = await client.deliveries(environment)
          return all.length === count && all.every((d) => d.status === "processed") ? all : undefined
        }, `the ${environment} deliveries to be processed`, 60_000)
      const [production, sandbox] = await Promise.all([processed("production", 4), processed("sandbox", 2)])
      for (const delivery of [...production, ...sandbox]) expect(delivery.responseStatus).toBe(200)

      // at the receiver: each event confirmed by a 200 exactly once; only the scripted first attempts got a 500
      const prod = receiver.at("/restart-prod")
      const sand = receiver.at("/restart-sandbox")
      const confirmed = (requests: Array<Received>, failedFirst: number) => requests.slice(failedFirst).map((r) => eventOf(r).id as string)
      const productionEvents = confirmed(prod, 1)
      const sandboxEvents = confirmed(sand, 2)
      expect(productionEvents.sort()).toEqual(production.map((d) => `evt_${d.id}`).sort())
      expect(sandboxEvents.sort()).toEqual(sandbox.map((d) => `evt_${d.id}`).sort())
      expect(prod[0]!.headers["x-service-delivery"]).toBe(inFlight)
      expect(new Set(sand.slice(0, 2).map((r) => r.headers["x-service-delivery"]))).toEqual(new Set(waiting))
      // the deliveries that were open went out again only after the server was gone
      for (const r of [...prod.slice(1), ...sand.slice(2)]) expect(r.receivedAt).toBeGreaterThan(stoppedAt)
      // a delivery's attempts count every request it made, before the loss and after (its 5-attempt limit holds across restarts)
      for (const [delivery, received] of [...production.map((d) => [d, prod] as const), ...sandbox.map((d) => [d, sand] as const)]) {
        expect(delivery.attempts, delivery.id).toBe(received.filter((r) => r.headers["x-service-delivery"] === delivery.id).length)
      }
      for (const r of prod) expect(signatureIsValid(secret.production, r)).toBe(true)
      for (const r of sand) expect(signatureIsValid(secret.sandbox, r)).toBe(true)
      const operationEvents = prod.slice(1).map(eventOf).filter((e) => e.type !== "webhook.test")
      expect(operationEvents.map((e) => e.data.id).sort()).toEqual([...ids].sort())
      for (const event of operationEvents) expect(event.type).toBe("modules.completed")

      // billed once: a module query per module requested, nothing for the restarts or the test events
      const usage = { production: await client.usage("production"), sandbox: await client.usage("sandbox") }
      expect(usage.production.moduleQueries.used).toBe(requests.reduce((n, r) => n + r.modules.length, 0))
      expect(usage.production.plateQueries.used).toBe(0)
      expect(usage.sandbox.moduleQueries.used).toBe(0)
      expect(usage.sandbox.plateQueries.used).toBe(0)

      // the workflows ran again under their ids, as new runs on the new server, served by the same worker process
      expect(server.output()).toMatch(/reconciler: \d+ started, [1-9]\d* restarted/)
      expect(running(worker), "the worker kept running across the server's restart").toBe(true)
      await withClient(async (temporalClient) => {
        for (const [i, workflowId] of workflowIds.entries()) {
          const description = await waitFor(async () => {
            const d = await temporalClient.workflow.getHandle(workflowId).describe()
            return d.status.name === "RUNNING" ? undefined : d
          }, `${workflowId} to close`)
          expect(description.status.name).toBe("COMPLETED")
          expect(description.runId).not.toBe(firstRuns[i])
        }
      })
    } finally {
      dumpForDebugging("restart", server, worker)
      await halt(worker)
      await halt(server)
      // the next tests need a server, even if this one failed while there was none
      if (serverDown) temporal = await startTemporalServer(runScript!, temporal.port)
    }
  }, 150_000)

  it("the worker killed with kill -9 in the middle of an activity: the activity is retried after its heartbeat timeout, not its start-to-close timeout, and the operation completes", async () => {
    const env = envFor(`vda-chaos-worker-${Date.now()}`)
    let server: ServerProcess | undefined
    let first: WorkerProcess | undefined
    let second: WorkerProcess | undefined
    try {
      ;[server, first] = await Promise.all([startServer(env), startWorker(workerEnv(env))])
      const client = api(server, "worker")
      await client.hookTo("production", "/kill-worker")
      const key = "vtv/AC601DE"
      upstream.hold(key)
      const id = await client.createModules("AC601DE", ["vtv"])
      const workflowId = operationWorkflowId("worker", "AC601DE", ["vtv"], id)

      // the lookup is at the upstream: the activity is in the middle of its call
      const held = await waitFor(() => upstream.at(key)[0], "the lookup to reach the upstream")
      const killedAt = Date.now()
      expect(await first.stop("SIGKILL")).toBeNull()
      second = await startWorker(workerEnv(env))
      const secondReadyAt = Date.now()
      const retried = await waitFor(() => upstream.at(key)[1], "the retried lookup to reach the upstream", 40_000)
      timings.killToRetryMs = retried.at - killedAt
      timings.startToRetryMs = retried.at - held.at
      timings.killToNewWorkerReadyMs = secondReadyAt - killedAt
      expect(held.abandonedAt, "the killed worker's call was cut").toBeDefined()
      // the heartbeat timeout (5 s) decided the retry: not before it, and well before the start-to-close timeout (15 s)
      expect(retried.at - held.at).toBeGreaterThanOrEqual(4_000)
      // …and it came as soon as both the heartbeat timeout had passed and a worker was polling again
      expect(retried.at - Math.max(secondReadyAt, held.at + ACTIVITY_TIMEOUTS.heartbeatMs)).toBeLessThan(3_000)

      // while the retry is held: the pending activity is on its second attempt, after a heartbeat timeout
      const pending = await withClient(async (temporalClient) =>
        (await temporalClient.workflow.getHandle(workflowId).describe()).raw.pendingActivities ?? [])
      const lookup = pending.find((a) => a.activityType?.name === "fetchModule")
      expect(lookup, JSON.stringify(pending)).toBeDefined()
      expect(lookup!.attempt).toBe(2)
      expect(lookup!.lastFailure?.timeoutFailureInfo?.timeoutType, JSON.stringify(lookup!.lastFailure)).toBe(HEARTBEAT)
      // the server ended the first attempt about 5 s after it started (start-to-close: 15 s), whenever the new worker was ready
      const firstAttemptEnded = millis(lookup!.lastAttemptCompleteTime)
      timings.startToFirstAttemptTimedOutMs = firstAttemptEnded - held.at
      expect(firstAttemptEnded - held.at).toBeGreaterThanOrEqual(4_000)
      expect(firstAttemptEnded - held.at).toBeLessThan(SOURCE_START_TO_CLOSE_MS - 5_000)

      upstream.release(key)
      const done = await client.final(id)
      expect(done.status, JSON.stringify(done)).toBe("completed")
      expect(done.modules.vtv.status).toBe("completed")
      expect(upstream.at(key)).toHaveLength(2)

      // the history says the same: the lookup started a second time after a heartbeat timeout, and never timed out for good
      const history = await withClient((temporalClient) => temporalClient.workflow.getHandle(workflowId).fetchHistory())
      const events = history.events ?? []
      const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === "fetchModule")!
      const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled.eventId))
      expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2)
      // (the test server leaves the started event's lastFailure out: the pending activity above showed it)
      expect(started?.activityTaskStartedEventAttributes?.identity, "the retry ran on the new worker").toMatch(new RegExp(`^${second.child.pid}@`))
      expect(events.some((e) => e.activityTaskTimedOutEventAttributes)).toBe(false)

      // its event delivered once, charged once
      const delivered = await waitFor(async () => {
        const all = await client.deliveries("production")
        return all.length === 1 && all[0].status === "processed" ? all[0] : undefined
      }, "the delivery to be processed")
      expect(delivered).toMatchObject({ attempts: 1, responseStatus: 200 })
      expect(receiver.at("/kill-worker").map((r) => eventOf(r))).toMatchObject([{ type: "modules.completed", data: { id, status: "completed" } }])
      expect((await client.usage("production")).moduleQueries.used).toBe(1)
    } finally {
      dumpForDebugging("worker", server, second)
      await halt(second)
      await halt(first)
      await halt(server)
    }
  }, 120_000)

  it("the API killed with kill -9 right after a 202: the operation completes, its event delivered once, charged once", async () => {
    const env = envFor(`vda-chaos-api-${Date.now()}`)
    let first: ServerProcess | undefined
    let second: ServerProcess | undefined
    let worker: WorkerProcess | undefined
    try {
      ;[first, worker] = await Promise.all([startServer(env), startWorker(workerEnv(env))])
      await api(first, "api").hookTo("production", "/kill-api")
      const keys = ["fines/AC701DE", "gnc/AC701DE"]
      for (const key of keys) upstream.hold(key)
      const created = await api(first, "api").call("production", "/v2/vehicles/AC701DE/modules", {
        method: "POST",
        body: JSON.stringify({ modules: ["fines", "gnc"] })
      })
      const body = await json(created)
      expect(created.status, JSON.stringify(body)).toBe(202)
      expect(await first.stop("SIGKILL")).toBeNull()
      const id = body.id as string

      // a new API process on the same database
      second = await startServer(env)
      const client = api(second, "api")
      await waitFor(() => (keys.every((key) => upstream.at(key).length > 0) || undefined), "the lookups to reach the upstream")
      for (const key of keys) upstream.release(key)
      const done = await client.final(id)
      expect(done.status, JSON.stringify(done)).toBe("completed")
      for (const module of ["fines", "gnc"]) expect(done.modules[module].status).toBe("completed")

      const delivered = await waitFor(async () => {
        const all = await client.deliveries("production")
        return all.length === 1 && all[0].status === "processed" ? all[0] : undefined
      }, "the delivery to be processed")
      expect(delivered).toMatchObject({ attempts: 1, responseStatus: 200 })
      expect(receiver.at("/kill-api").map((r) => eventOf(r))).toMatchObject([{ type: "modules.completed", data: { id, status: "completed" } }])
      expect((await client.usage("production")).moduleQueries.used).toBe(2)
      for (const key of keys) expect(upstream.at(key)).toHaveLength(1)
      const description = await withClient((temporalClient) =>
        temporalClient.workflow.getHandle(operationWorkflowId("api", "AC701DE", ["fines", "gnc"], id)).describe())
      expect(description.status.name).toBe("COMPLETED")
    } finally {
      dumpForDebugging("api", second, worker)
      await halt(worker)
      await halt(second)
      await halt(first)
    }
  }, 120_000)
})
