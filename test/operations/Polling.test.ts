/**
 * What a poll tells a client besides the operation: `Retry-After` while the operation is not
 * final (when to ask again), none once it is, on v2's and v1's polls, in-process and on the real
 * listener, with the IETF `RateLimit` and `RateLimit-Policy` fields next to `X-RateLimit-*`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { apiOf } from "../support/ApiClient.js"
import { waitFor } from "../support/Processes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

let app: TestApp
let account: TestAccount
let sandboxUrl: string

beforeAll(async () => {
  // the sandbox's modules take long enough to poll them running
  app = await makeTestApp({ config: { SANDBOX_MODULE_LATENCY_MS: "1500" } })
  sandboxUrl = (await app.listen()).sandbox
  account = await app.createAccount({ plan: "growth" }) // 120 requests per minute
})

afterAll(() => app?.dispose())

const post = (path: string, body: unknown) =>
  app.sandbox(path, withKey(account.sandbox.key, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  }))

const untilFinal = (path: string, statusOf: (body: any) => string) =>
  waitFor(async () => {
    const res = await app.sandbox(path, withKey(account.sandbox.key))
    return ["completed", "partial", "failed"].includes(statusOf(await json(res.clone()))) ? res : undefined
  }, `${path} to finish`, 20_000)

describe("polling an operation", () => {
  it("v2: Retry-After while it runs, in-process and on the listener alike, and none once final", async () => {
    const created = await json(await post("/v2/vehicles/AB123CD/modules", { modules: ["fines"] }))
    const running = await app.sandbox(`/v2/operations/${created.id}`, withKey(account.sandbox.key))
    expect((await json(running)).status).toMatch(/queued|processing/)
    expect(running.headers.get("retry-after")).toBe("2")

    const onListener = await fetch(`${sandboxUrl}/v2/operations/${created.id}`, { headers: { "x-api-key": account.sandbox.key } })
    expect((await onListener.json() as { status: string }).status).toMatch(/queued|processing/)
    expect(onListener.headers.get("retry-after")).toBe("2")
    expect(onListener.headers.get("ratelimit-policy")).toBe("\"rpm\";q=120;w=60")
    expect(onListener.headers.get("ratelimit")).toMatch(/^"rpm";r=\d+;t=\d+$/)
    expect(onListener.headers.get("ratelimit")).toContain(`r=${onListener.headers.get("x-ratelimit-remaining")};`)

    const final = await untilFinal(`/v2/operations/${created.id}`, (body) => body.status)
    expect(final.headers.get("retry-after")).toBeNull()
    const finalOnListener = await fetch(`${sandboxUrl}/v2/operations/${created.id}`, { headers: { "x-api-key": account.sandbox.key } })
    expect(finalOnListener.status).toBe(200)
    expect(finalOnListener.headers.get("retry-after")).toBeNull()
  })

  it("v1: Retry-After on a running modules operation and a running report, none once final", async () => {
    const operation = (await json(await post("/v1/vehicles/modules", { plate: "AB124CD", modules: ["fines"] }))).data
    const running = await app.sandbox(`/v1/vehicles/modules/${operation.id}`, withKey(account.sandbox.key))
    expect(running.headers.get("retry-after")).toBe("2")

    const report = (await json(await post("/v1/reports", { plate: "AB125CD" }))).data
    const runningReport = await app.sandbox(`/v1/reports/${report.id}`, withKey(account.sandbox.key))
    expect(runningReport.headers.get("retry-after")).toBe("2")

    expect((await untilFinal(`/v1/vehicles/modules/${operation.id}`, (body) => body.data.status)).headers.get("retry-after")).toBeNull()
    expect((await untilFinal(`/v1/reports/${report.id}`, (body) => body.data.status)).headers.get("retry-after")).toBeNull()
  })

  it("a settled operation's later polls are answered without reading it again, and still to its owner only", async () => {
    const owner = await app.createAccount()
    const created = await app.sandbox("/v2/vehicles/AB127CD/modules", withKey(owner.sandbox.key, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ modules: ["fines", "vtv"] })
    }))
    const { id } = await json(created)
    const poll = (key: string) => app.sandbox(`/v2/operations/${id}`, withKey(key))
    const settled = await waitFor(async () => {
      const body = await json(await poll(owner.sandbox.key))
      return body.status === "completed" || body.status === "partial" ? body : undefined
    }, `${id} to finish`, 20_000)

    // a change no writer of the service makes (final rows are never written again): seen only if read again
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`update operations set status = 'processing', updated_at = now() where id = ${id}`))
    const again = await poll(owner.sandbox.key)
    expect(again.status).toBe(200)
    expect(await json(again)).toEqual(settled)

    const stranger = await app.createAccount()
    const theirs = await poll(stranger.sandbox.key)
    expect(theirs.status).toBe(404)
    expect((await json(theirs)).error).toMatchObject({ code: "operation_not_found", message: `No operation ${id}` })
  })

  it("on the listener, concurrent polls are admitted in batches: the per-minute limit holds exactly, and each admitted poll sees its operation", async () => {
    const limited = await app.createAccount()
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setCustom(limited.id, { requestsPerMinute: 12 })))
    const created = await app.sandbox("/v2/vehicles/AB126CD/modules", withKey(limited.sandbox.key, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ modules: ["fines"] })
    }))
    const { id } = await json(created)
    const api = apiOf(sandboxUrl, limited.sandbox.key)
    const answers = await Promise.all(Array.from({ length: 30 }, () => api.answer((c) => c.operations.getOperation({ params: { id } }))))
    const admitted = answers.filter((answer) => answer.status === 200)
    // the creation took one of the minute's twelve requests; the admission call ran once per batch
    expect(admitted).toHaveLength(11)
    for (const answer of admitted) expect(answer.body.id).toBe(id)
    expect(answers.filter((answer) => answer.status === 429).map((answer) => answer.body.error?.code))
      .toEqual(Array(19).fill("rate_limit_exceeded"))
    for (const answer of answers) if (answer.status === 429) expect(answer.error).toMatchObject({ code: "rate_limit_exceeded", details: { meter: "requests", limit: 12 } })
  })
})

