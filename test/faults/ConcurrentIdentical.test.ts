/**
 * Identical module requests at the same moment, spread over two server processes on one
 * database: one operation, answered 202 once and 200 (reused) to everyone else, never a 500,
 * charged once. At the quota's edge the identical requests still reuse (reuse is decided before
 * quota) while a different request is refused, consuming nothing.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectErrorBody } from "../support/ErrorShape.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer } from "../support/Processes.js"
import { apiOf } from "../support/ApiClient.js"

let env: Record<string, string>
let servers: Array<ServerProcess>
let upstream: Http.Server

/** A module source that answers after a while, so the operations stay active during the test. */
const startSlowUpstream = () =>
  new Promise<Http.Server>((resolve) => {
    const server = Http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ items: [] })), 3_000)
    })
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

const account = async (moduleQueries: string) =>
  (await cliAccount(env, {
    owner: "Twins",
    plan: "custom",
    custom: ["--rpm", "unlimited", "--module-queries", moduleQueries],
    environments: ["production", "sandbox"]
  })).keys

beforeAll(async () => {
  upstream = await startSlowUpstream()
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  env = {
    DATABASE_URL: await freshDatabase(),
    SANDBOX_MODULE_LATENCY_MS: "3000",
    FINES_UPSTREAM_URL: `${base}/fines`,
    VTV_UPSTREAM_URL: `${base}/vtv`,
    TAX_DEBT_UPSTREAM_URL: `${base}/tax_debt`,
    GNC_UPSTREAM_URL: `${base}/gnc`
  }
  servers = await Promise.all([startServer(env), startServer(env)])
}, 60_000)

afterAll(async () => {
  for (const server of servers ?? []) if (server.child.exitCode === null) await server.stop("SIGKILL")
  upstream?.close()
})

type Environment = "production" | "sandbox"

/** The API on the `n`-th process (round robin). */
const api = (environment: Environment, n: number, key: string) => {
  const server = servers[n % servers.length]!
  return apiOf(environment === "production" ? server.productionUrl : server.sandboxUrl, key)
}

const post = (environment: Environment, n: number, key: string, plate: string, modules: ReadonlyArray<string>) =>
  api(environment, n, key).answer((c) => c.operations.createModulesOperation({ params: { plate }, payload: { modules } }))

const usage = async (environment: Environment, key: string) =>
  (await api(environment, 0, key).client.metering.getUsage()).data.moduleQueries.used

/** Sends `count` identical requests at once; their statuses and operation ids. */
const burst = async (environment: Environment, key: string, plate: string, modules: ReadonlyArray<string>, count: number) => {
  const answers = await Promise.all(Array.from({ length: count }, (_, n) => post(environment, n, key, plate, modules)))
  return { statuses: answers.map((a) => a.status).sort(), ids: new Set(answers.map((a) => a.body.id)) }
}

describe("identical module requests at the same moment, on two processes", () => {
  for (const environment of ["production", "sandbox"] as const) {
    it(`${environment}: one operation, one 202 and 200s, charged once`, async () => {
      const keys = await account("1000")
      for (const [round, modules] of [["fines", "vtv"], ["fines", "vtv", "tax_debt", "gnc"], ["gnc"]].entries()) {
        const { ids, statuses } = await burst(environment, keys[environment], `AD${100 + round}FG`, modules, 16)
        expect(statuses).toEqual([...Array(15).fill(200), 202].sort())
        expect(ids.size).toBe(1)
      }
      expect(await usage(environment, keys[environment])).toBe(2 + 4 + 1)
    }, 60_000)
  }

  it("at the quota's edge: the identical requests reuse, a different one is refused and consumes nothing", async () => {
    const keys = await account("2")
    const { ids, statuses } = await burst("production", keys.production, "AD200FG", ["fines", "vtv"], 12)
    expect(statuses).toEqual([...Array(11).fill(200), 202].sort())
    expect(ids.size).toBe(1)
    const other = await post("production", 1, keys.production, "AD201FG", ["fines"])
    expect(other.status).toBe(429)
    const error = expectErrorBody(other.text, other.headers["x-request-id"], "over quota")
    expect(error.code).toBe("quota_exceeded")
    expect(other.error).toMatchObject({ code: "quota_exceeded", status: 429, details: { meter: "module_queries" } })
    expect(await usage("production", keys.production)).toBe(2)
  }, 60_000)
})
