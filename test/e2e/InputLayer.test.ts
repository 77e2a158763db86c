/**
 * The input layer on the real server, as a careless or hostile client meets it: every refusal has
 * its exact status, the contract's error body with no internal detail, and consumes nothing.
 */
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer } from "../support/Processes.js"
import { apiOf } from "../support/ApiClient.js"

let server: ServerProcess
let env: Record<string, string>
let key: string

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabase(), SANDBOX_MODULE_LATENCY_MS: "50" }
  key = (await cliAccount(env, { owner: "Input", plan: "custom", custom: ["--rpm", "unlimited"], environments: ["sandbox"] })).keys.sandbox
  server = await startServer(env)
}, 60_000)
afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
})

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${server.sandboxUrl}${path}`, { ...init, headers: { "x-api-key": key, ...init.headers } })

/** The account's usage, through the API's client: an ordinary call beside the hostile ones. */
const usage = async () => (await apiOf(server.sandboxUrl, key).client.metering.getUsage()).data

/** The refusal's status and body: our error shape, no stack, SQL or path. */
const refused = async (res: Response, status: number) => {
  expect(res.status).toBe(status)
  const text = await res.text()
  expect(text).not.toMatch(/\n\s+at |select |insert |\/tmp\/|\/work\/|node_modules|Error:/)
  const body = JSON.parse(text)
  expect(body).toEqual({
    error: { code: "invalid_request", message: expect.any(String), requestId: res.headers.get("x-request-id"), retryable: false }
  })
  return body.error.message as string
}

const postModules = (body: string | Uint8Array, contentType = "application/json", plate = "AB123CD") =>
  call(`/v2/vehicles/${plate}/modules`, { method: "POST", headers: { "content-type": contentType }, body })

describe("URLs", () => {
  it("a NUL or a lone surrogate in a path or query: 400, nothing consumed", async () => {
    for (const path of ["/v2/operations/op_%00", "/v2/vehicles/AB123CD?sandbox_seed=a%00b", "/v2/vehicles/AB123CD?sandbox_seed=%ED%A0%80", "/v2/operations/%E0%A4%A"]) {
      expect(await refused(await call(path), 400), path).toMatch(/URL/)
    }
    expect((await usage()).plateQueries.used).toBe(0)
  })

  it("a route is matched exactly: other case or a trailing slash is 404", async () => {
    for (const path of ["/v2/USAGE", "/v2/usage/", "/V2/usage", "/v2/vehicles/AB123CD/", "/healthz/"]) {
      expect(await refused(await call(path), 404), path).toContain("No route")
    }
    expect((await call("/v2/usage")).status).toBe(200)
  })

  it("HEAD on a metered route is 405 with Allow, and bills nothing", async () => {
    const res = await call("/v2/vehicles/AB123CD", { method: "HEAD" })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("GET")
    expect((await usage()).plateQueries.used).toBe(0)
  })
})

describe("bodies", () => {
  it("another content type (multipart, form, text, none): 415, no temporary file, nothing consumed", async () => {
    const form = new FormData()
    form.append("modules", new Blob(["x".repeat(1000)]), "file.bin")
    const multipart = await call("/v2/vehicles/AB123CD/modules", { method: "POST", body: form })
    expect(await refused(multipart, 415)).toContain("application/json")
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "application/json; charset=latin1", "application/jsonx"]) {
      await refused(await postModules('{"modules":["fines"]}', type), 415)
    }
    expect((await usage()).moduleQueries.used).toBe(0)
  })

  it("an empty body of another declared type: 415 on an endpoint that takes a body, nothing consumed; ignored on one that takes none", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await postModules("", type)
      expect(await refused(res, 415), type).toContain("application/json")
      const v1 = await call("/v1/vehicles/modules", { method: "POST", headers: { "content-type": type }, body: "" })
      expect(v1.status, type).toBe(415)
      expect((await v1.json() as any).success, type).toBe(false)
    }
    expect((await usage()).moduleQueries.used).toBe(0)
    const test = await call("/v2/webhooks/test", { method: "POST", headers: { "content-type": "text/plain" }, body: "" })
    expect(test.status).not.toBe(415)
  })

  it("JSON with charset=utf-8 is accepted", async () => {
    const res = await postModules('{"modules":["fines"]}', "application/json; charset=UTF-8", "AB124CD")
    expect(res.status).toBe(202)
  })

  it("nested deeper than 32 levels (10,000 deep too): 400, the server unharmed", async () => {
    expect(await refused(await postModules(`${"[".repeat(10_000)}${"]".repeat(10_000)}`), 400)).toMatch(/nested/)
    expect(await refused(await postModules(`{"modules":${"[".repeat(33)}${"]".repeat(33)}}`), 400)).toMatch(/nested/)
    expect((await call("/healthz")).status).toBe(200)
  })

  it("a NUL or a lone surrogate in any string or key: 400", async () => {
    const before = (await usage()).moduleQueries.used
    for (const body of ['{"modules":["fines\\u0000"]}', '{"modules":["\\ud800"]}', '{"mod\\u0000ules":["fines"]}', '{"url":"https://x.example/\\udc00"}']) {
      expect(await refused(await postModules(body), 400), body).toMatch(/NUL|surrogate/)
    }
    const webhook = await call("/v2/webhooks/config", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: '{"url":"https://hooks.example.com/a\\u0000b"}'
    })
    await refused(webhook, 400)
    expect((await usage()).moduleQueries.used).toBe(before)
  })

  it("over 64 KiB (and up to a megabyte): 413 with the error body", async () => {
    const before = (await usage()).moduleQueries.used
    for (const size of [65 * 1024, 300 * 1024, 1024 * 1024]) {
      const body = JSON.stringify({ modules: ["fines"], pad: "x".repeat(size) })
      expect(await refused(await postModules(body), 413), String(size)).toContain("64 KiB")
    }
    expect((await usage()).moduleQueries.used).toBe(before)
  })

  it("an oversized chunked body: 413, and the connection stays usable for the next request", async () => {
    const { hostname, port } = new URL(server.sandboxUrl)
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = Net.connect(Number(port), hostname === "localhost" ? "127.0.0.1" : hostname)
      let text = ""
      socket.setTimeout(10_000, () => socket.destroy(new Error("no answer")))
      socket.on("data", (chunk) => {
        text += chunk.toString("utf8")
        if ((text.match(/HTTP\/1\.1 /g) ?? []).length === 2 && text.trimEnd().endsWith("}")) socket.end()
      })
      socket.on("error", reject)
      socket.on("close", () => resolve(text))
      const chunk = "x".repeat(16 * 1024)
      let request = `POST /v2/vehicles/AB123CD/modules HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`
      for (let i = 0; i < 8; i++) request += `${chunk.length.toString(16)}\r\n${chunk}\r\n`
      request += `0\r\n\r\nGET /v2/usage HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n\r\n`
      socket.write(request)
    })
    const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])
    expect(statuses).toEqual(["413", "200"])
  })
})
