/**
 * Resending a webhook delivery, in-process on the inline engine, to a real HTTPS receiver: a
 * failed or processed delivery goes out again as a new attempt series (same delivery id, same
 * event, same bytes, attempts counted from one); a pending one, an unknown one or another
 * account's is refused and nothing changes; the webhook's configuration applies to the new
 * series' attempts as to any; a run of an earlier series still finishing leaves the new one alone;
 * a resend whose start was lost is taken up by the engine's sweep.
 * Retries are fast here: 400 ms, then doubling up to 1 s.
 */
import * as Fs from "node:fs/promises"
import * as Https from "node:https"
import * as Tls from "node:tls"
import { Effect, Option, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Principal } from "../../src/principal/Domain.js"
import { Admission } from "../../src/metering/Admission.js"
import { OperationActivities } from "../../src/operations/Activities.js"
import type { Environment } from "../../src/platform/http/RequestContext.js"
import { type DeliveryRow, WebhooksRepo } from "../../src/webhooks/Repo.js"
import { Webhooks } from "../../src/webhooks/Webhooks.js"
import { waitFor } from "../support/Processes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"
import {
  FAST_RETRY,
  makeTlsFixture,
  type Received,
  type Receiver,
  receivedEvent,
  signatureIsValid,
  startReceiver,
  type TlsFixture
} from "../support/WebhookReceiver.js"

let tls: TlsFixture
let receiver: Receiver
let app: TestApp
const defaultCa = Https.globalAgent.options.ca

beforeAll(async () => {
  tls = await makeTlsFixture()
  receiver = await startReceiver(tls)
  // the sender (in this process) trusts the receiver's authority, as NODE_EXTRA_CA_CERTS would
  Https.globalAgent.options.ca = [...Tls.rootCertificates, await Fs.readFile(tls.caFile, "utf8")]
  app = await makeTestApp({
    config: {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      // the engine sweeps for work nobody runs every 500 ms
      INLINE_CLAIM_TTL_MS: "1500",
      ...FAST_RETRY
    }
  })
})

afterAll(async () => {
  await app?.dispose()
  await receiver?.close()
  await tls?.dispose()
  Https.globalAgent.options.ca = defaultCa
})

const sandboxCall = (account: TestAccount, path: string, init: RequestInit = {}) =>
  app.sandbox(path, withKey(account.sandbox.key, { ...init, headers: { "content-type": "application/json", ...init.headers } }))

/** Points the sandbox webhook at `path` on the receiver; the secret. */
const configure = async (account: TestAccount, path: string, enabled = true): Promise<string> => {
  const res = await sandboxCall(account, "/v2/webhooks/config", {
    method: "PATCH",
    body: JSON.stringify({ url: `${receiver.url}${path}`, enabled })
  })
  expect(res.status).toBe(200)
  return (await json(res)).secret
}

const sendTest = async (account: TestAccount): Promise<string> => {
  const res = await sandboxCall(account, "/v2/webhooks/test", { method: "POST" })
  expect(res.status).toBe(202)
  return (await json(res)).id
}

const row = (id: string): Promise<DeliveryRow | undefined> =>
  app.run(Effect.flatMap(WebhooksRepo, (repo) => repo.findDelivery(id)).pipe(Effect.map(Option.getOrUndefined)))

const settled = (id: string, done: (row: DeliveryRow) => boolean = (r) => r.status !== "pending") =>
  waitFor(async () => {
    const found = await row(id)
    return found !== undefined && done(found) ? found : undefined
  }, `delivery ${id} to settle`)

const principal = (account: TestAccount, environment: Environment = "sandbox"): Promise<Principal> =>
  app.run(Effect.flatMap(Admission, (admission) => admission.admit(account[environment].key, environment)).pipe(
    Effect.map((admitted) => admitted.principal),
    Effect.orDie
  ))

const resend = async (account: TestAccount, id: string, environment: Environment = "sandbox") => {
  const as = await principal(account, environment)
  return app.run(Effect.result(Effect.flatMap(Webhooks, (webhooks) => webhooks.resend(as, id))))
}

const listed = async (account: TestAccount, id: string) =>
  (await json(await sandboxCall(account, "/v2/webhooks/deliveries?limit=100"))).deliveries.find((d: { id: string }) => d.id === id)

const activities = <A, E>(f: (a: OperationActivities["Service"]) => Effect.Effect<A, E>) => app.run(Effect.flatMap(OperationActivities, f))

const eventOf = (request: Received) => JSON.parse(request.rawBody.toString("utf8"))

describe("resending a delivery", () => {
  it("one whose attempts all failed goes out again: same delivery and event id, same bytes, series 2, attempts from 1", async () => {
    const account = await app.createAccount()
    const secret = await configure(account, "/failing")
    receiver.script("/failing", [500])
    const id = await sendTest(account)
    const failed = await settled(id)
    expect(failed).toMatchObject({ status: "failed", series: 1, attempts: 5, responseStatus: 500 })
    expect(receiver.at("/failing")).toHaveLength(5)

    receiver.script("/failing", [503, 200])
    const resent = await resend(account, id)
    expect(Result.isSuccess(resent) && resent.success).toMatchObject({
      id,
      status: "pending",
      attempts: 0,
      responseStatus: null,
      payload: { id: `evt_${id}`, type: "webhook.test" }
    })

    const processed = await settled(id)
    // a second series of its own: its attempts counted afresh, its first one retried
    expect(processed).toMatchObject({ status: "processed", series: 2, attempts: 2, responseStatus: 200, lastError: null })
    expect(await listed(account, id)).toMatchObject({ status: "processed", attempts: 2, responseStatus: 200 })
    const requests = receiver.at("/failing")
    expect(requests).toHaveLength(7)
    for (const request of requests) {
      expect(request.headers["x-service-delivery"]).toBe(id)
      expect(request.rawBody.equals(requests[0]!.rawBody)).toBe(true)
      expect(signatureIsValid(secret, request)).toBe(true)
      expect(receivedEvent(secret, request)).toMatchObject({ event: "v2.webhook.test", eventId: `evt_${id}` })
    }
    expect(eventOf(requests[6]!)).toMatchObject({ id: `evt_${id}`, type: "webhook.test" })
  })

  it("one that was processed goes out again too", async () => {
    const account = await app.createAccount()
    await configure(account, "/processed")
    const id = await sendTest(account)
    expect(await settled(id)).toMatchObject({ status: "processed", series: 1, attempts: 1 })

    const resent = await resend(account, id)
    expect(Result.isSuccess(resent) && resent.success).toMatchObject({ id, status: "pending", attempts: 0 })
    const again = await settled(id)
    expect(again).toMatchObject({ status: "processed", series: 2, attempts: 1, responseStatus: 200 })
    const requests = receiver.at("/processed")
    expect(requests.map((r) => r.headers["x-service-delivery"])).toEqual([id, id])
    expect(requests[1]!.rawBody.equals(requests[0]!.rawBody)).toBe(true)

    // and again: each resend is one more series
    expect(Result.isSuccess(await resend(account, id))).toBe(true)
    expect(await settled(id, (r) => r.series === 3 && r.status !== "pending")).toMatchObject({ status: "processed", attempts: 1 })
    expect(receiver.at("/processed")).toHaveLength(3)
  })

  it("a pending delivery cannot be resent while its series runs, and nothing changes", async () => {
    const account = await app.createAccount()
    await configure(account, "/held")
    let release!: (status: number) => void
    const answer = new Promise<number>((resolve) => (release = resolve))
    receiver.script("/held", [() => answer])
    const id = await sendTest(account)
    await waitFor(() => (receiver.at("/held").length > 0 ? true : undefined), "the first attempt to arrive")
    const before = await row(id)
    expect(before).toMatchObject({ status: "pending", series: 1, attempts: 0 })

    const refused = await resend(account, id)
    expect(Result.isFailure(refused) && refused.failure).toMatchObject({ _tag: "DeliveryInProgress", id })
    expect(await row(id)).toEqual(before)

    release(200)
    expect(await settled(id)).toMatchObject({ status: "processed", series: 1, attempts: 1 })
    expect(receiver.at("/held")).toHaveLength(1)
  })

  it("a straggler of the earlier series (a late attempt or settle) leaves the resent delivery alone", async () => {
    const account = await app.createAccount()
    await configure(account, "/straggler")
    const id = await sendTest(account)
    expect(await settled(id)).toMatchObject({ status: "processed", series: 1 })
    let release!: (status: number) => void
    const answer = new Promise<number>((resolve) => (release = resolve))
    receiver.script("/straggler", [() => answer])
    expect(Result.isSuccess(await resend(account, id))).toBe(true)
    await waitFor(() => (receiver.at("/straggler").length === 2 ? true : undefined), "the second series' first attempt")
    const running = await row(id)
    expect(running).toMatchObject({ status: "pending", series: 2, attempts: 0 })

    const policy = { maximumAttempts: 5, initialIntervalMs: 400, backoffCoefficient: 2, maximumIntervalMs: 1000 }
    await activities((a) => a.settleDelivery({ deliveryId: id }))
    await activities((a) => a.settleDelivery({ deliveryId: id, series: 1 }))
    expect(await activities((a) => a.attemptDelivery({ deliveryId: id, series: 1, attempt: 5, policy }))).toBe("failed")
    expect(await row(id)).toEqual(running)
    expect(receiver.at("/straggler")).toHaveLength(2)

    release(200)
    expect(await settled(id)).toMatchObject({ status: "processed", series: 2, attempts: 1 })
  })

  it("an unknown delivery, or one of another account or environment, is not found, and nothing changes", async () => {
    const owner = await app.createAccount()
    const stranger = await app.createAccount()
    await configure(owner, "/owned")
    const id = await sendTest(owner)
    const before = await settled(id)
    expect(before).toMatchObject({ status: "processed", series: 1 })

    for (
      const [who, deliveryId, environment] of [
        [stranger, id, "sandbox"],
        [owner, id, "production"],
        [owner, crypto.randomUUID(), "sandbox"],
        [owner, "not-a-delivery-id", "sandbox"]
      ] as const
    ) {
      const refused = await resend(who, deliveryId, environment)
      expect(Result.isFailure(refused) && refused.failure, `${deliveryId} (${environment})`).toMatchObject({ _tag: "DeliveryNotFound", id: deliveryId })
    }
    expect(await row(id)).toEqual(before)
    expect(receiver.at("/owned")).toHaveLength(1)
  })

  it("the new series follows the webhook's configuration: while it is disabled the attempt fails for good, unsent", async () => {
    const account = await app.createAccount()
    await configure(account, "/disabled")
    const id = await sendTest(account)
    expect(await settled(id)).toMatchObject({ status: "processed", series: 1 })
    await configure(account, "/disabled", false)

    expect(Result.isSuccess(await resend(account, id))).toBe(true)
    const failed = await settled(id)
    expect(failed).toMatchObject({ status: "failed", series: 2, attempts: 1, responseStatus: null, lastError: "the webhook is disabled or has no URL" })
    expect(receiver.at("/disabled")).toHaveLength(1)
  })

  it("v1's test event still goes out while the webhook is disabled, as it was recorded to", async () => {
    const account = await app.createAccount()
    await configure(account, "/v1-test", false)
    const res = await sandboxCall(account, "/v1/webhooks/test", { method: "POST" })
    expect(res.status).toBe(200)
    const { data } = await json(res)
    expect(await settled(data.id)).toMatchObject({ status: "processed", series: 1, sendsWhenDisabled: true })

    expect(Result.isSuccess(await resend(account, data.id))).toBe(true)
    expect(await settled(data.id)).toMatchObject({ status: "processed", series: 2, attempts: 1 })
    expect(receiver.at("/v1-test").map((r) => eventOf(r).eventId)).toEqual([`evt_${data.id}`, `evt_${data.id}`])
  })

  it("a resend whose start was lost (the process died right after it) is taken up by the engine's sweep", async () => {
    const account = await app.createAccount()
    await configure(account, "/lost-start")
    const id = await sendTest(account)
    expect(await settled(id)).toMatchObject({ status: "processed", series: 1 })

    // the resend's update alone, as if the process stopped before starting the delivery
    const resent = await app.run(Effect.flatMap(WebhooksRepo, (repo) => repo.resend(id, account.id, "sandbox", new Date())))
    expect(resent).toMatchObject({ _tag: "Some", value: { status: "pending", series: 2, startedAt: null } })
    expect(await settled(id)).toMatchObject({ status: "processed", series: 2, attempts: 1 })
    expect(receiver.at("/lost-start")).toHaveLength(2)
  })
})
