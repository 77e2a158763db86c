/**
 * The lean lane under a defect of what it calls (a bug: a service that throws). A request is never
 * left hanging, the process keeps serving, and nothing is counted twice: before admission has the
 * request it is passed on as it came; admitted, it is passed on admitted (HttpApi does not count
 * it again); charged, it is answered 500 with the contract's body (passing it on would charge it
 * again). Each defect is logged. The services are stubs, so that each case can break one call;
 * the lane runs on a real Node listener.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type * as Net from "node:net"
import { Cause, Effect, Exit, Layer, Logger, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Principal } from "../../src/accounts/Domain.js"
import { AccountStatus } from "../../src/accounts/Status.js"
import { Lane } from "../../src/lane/Lane.js"
import { Admission, type AdmissionRequest, type Admitted, type AdmittedAndCharged } from "../../src/metering/Admission.js"
import { Operations } from "../../src/operations/Operations.js"
import { operationsReadAlong } from "../../src/operations/Repo.js"
import { AppConfig } from "../../src/platform/Config.js"
import { VehicleQuery } from "../../src/vehicles/VehicleQuery.js"

const KEY = `vda_live_${"a".repeat(32)}`
const principal = { accountId: "acc_1", environment: "production", entitlements: { requestsPerMinute: null } } as unknown as Principal
const admitted: Admitted = { principal, limit: null, remaining: null, resetAt: new Date(Date.UTC(2026, 10, 25, 12, 1)), resetInSeconds: 30 }

/** What each stub does in the case at hand; a case sets what it breaks. */
const behaviour = {
  knownAccount: false,
  prepareAtOnce: (): unknown => undefined,
  getRead: (): unknown => Exit.fail("not found")
}
const offered: Array<AdmissionRequest> = []
const handedOver: Array<IncomingMessage> = []
const passedOn: Array<string> = []
const logged: Array<string> = []

const broken = (what: string) => () => {
  throw new Error(`${what} is broken`)
}

const stubs = Layer.mergeAll(
  Layer.succeed(Admission, {
    knownAccount: () => (behaviour.knownAccount ? { principal, fingerprint: "f" } : undefined),
    handOver: (source: IncomingMessage) => void handedOver.push(source),
    offer: (request: AdmissionRequest, done: (result: Exit.Exit<AdmittedAndCharged, never>) => void) => {
      offered.push(request)
      // answered later, as a batch is
      setImmediate(() => done(Exit.succeed({ admitted, charged: request.prepared !== undefined, ...(request.along ? { read: [] } : {}) })))
    }
  } as unknown as Admission),
  Layer.succeed(VehicleQuery, {
    prepareAtOnce: () => behaviour.prepareAtOnce(),
    prepare: () => Effect.succeed(Option.none())
  } as unknown as VehicleQuery),
  Layer.succeed(Operations, { pollReadAlong: operationsReadAlong, getRead: () => behaviour.getRead() } as unknown as Operations),
  Layer.succeed(AccountStatus, { offerRead: broken("the status read") } as unknown as AccountStatus),
  Layer.succeed(AppConfig, { requestBody: { maxBytes: 64 * 1024, maxDepth: 32 } } as unknown as AppConfig),
  Logger.replace(Logger.defaultLogger, Logger.make(({ cause, message }) => {
    logged.push(`${[message].flat().join(" ")}: ${Cause.pretty(cause).split("\n")[0]}`)
  }))
)

const runtime = ManagedRuntime.make(Lane.Default.pipe(Layer.provide(stubs), Layer.merge(stubs)))
let server: Server
let url: string

beforeAll(async () => {
  const front = await runtime.runPromise(Effect.flatMap(Lane, (lane) =>
    lane.front("production", (request, response) => {
      passedOn.push(request.url ?? "")
      response.writeHead(299, { "content-type": "text/plain" }).end("passed on")
    })))
  server = createServer(front)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
})

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  await runtime.dispose()
})

beforeEach(() => {
  Object.assign(behaviour, { knownAccount: false, prepareAtOnce: () => undefined, getRead: () => Exit.fail("not found") })
  for (const list of [offered, handedOver, passedOn, logged]) list.length = 0
})

const get = async (path: string) => {
  const res = await fetch(`${url}${path}`, { headers: { "x-api-key": KEY, "x-request-id": "defect-1" }, signal: AbortSignal.timeout(5_000) })
  return { status: res.status, body: await res.text() }
}

describe("the lean lane under a defect of what it calls", () => {
  it("before admission (the vehicle query's preparation throws): passed on as it came, counted nowhere", async () => {
    behaviour.knownAccount = true
    behaviour.prepareAtOnce = broken("the preparation")
    expect(await get("/v2/vehicles/AB123CD")).toEqual({ status: 299, body: "passed on" })
    expect(offered).toEqual([])
    expect(handedOver).toEqual([])
    expect(logged).toEqual(["the lean lane failed a request: Error: the preparation is broken"])
  })

  it("admitted (a poll's read throws): passed on admitted, so HttpApi does not count it again", async () => {
    behaviour.getRead = broken("the poll's read")
    expect(await get("/v2/operations/op_1")).toEqual({ status: 299, body: "passed on" })
    expect(offered).toHaveLength(1)
    expect(handedOver).toHaveLength(1)
    expect(logged).toEqual(["the lean lane failed a request: Error: the poll's read is broken"])
  })

  it("admitted (the status read throws in its batch's callback): passed on admitted", async () => {
    expect(await get("/v2/status")).toEqual({ status: 299, body: "passed on" })
    expect(handedOver).toHaveLength(1)
    expect(logged).toEqual(["the lean lane failed a request: Error: the status read is broken"])
  })

  it("charged (the answer cannot be encoded): answered 500 with the contract's body, never passed on", async () => {
    behaviour.knownAccount = true
    behaviour.prepareAtOnce = () => ({ response: { success: "not a vehicle" }, consumption: { accountId: "acc_1", environment: "production", charges: [] } })
    const answer = await get("/v2/vehicles/AB123CD")
    expect(answer.status).toBe(500)
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        code: "internal_error",
        message: "The request could not be completed because of an internal failure",
        requestId: "defect-1",
        retryable: false
      }
    })
    expect(passedOn).toEqual([])
    expect(handedOver).toEqual([])
  })

  it("keeps serving after each of them", async () => {
    behaviour.getRead = () => Exit.fail("not found")
    expect(await get("/v2/operations/op_2")).toEqual({ status: 299, body: "passed on" })
    expect(logged).toEqual([])
  })
})
