/**
 * API_PROCESSES=2: two API processes share the listeners (node:cluster) on one database. Per-minute
 * limits and allowances stay exact across them, a process that dies is replaced, and SIGTERM
 * stops them all.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer, waitFor } from "../support/Processes.js"

let env: Record<string, string>
let server: ServerProcess

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabase() }
  server = await startServer({ ...env, API_PROCESSES: "2" })
  await waitFor(() => (server.output().includes("2 API processes listening") ? true : undefined), "both API processes")
}, 60_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
})

/** The API processes the primary runs, from /proc. */
const apiProcesses = (primary: number) =>
  Fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === primary
    } catch {
      return false
    }
  }).map(Number)

/** The account's counters as the database holds them, summed over periods. */
const countersOf = async (accountId: string) => {
  const client = new Pg.Client({ connectionString: env.DATABASE_URL })
  await client.connect()
  try {
    const { rows } = await client.query<{ meter: string; used: number }>(
      "select meter, sum(used)::int as used from meter_counters where account_id = $1 group by meter",
      [accountId]
    )
    return Object.fromEntries(rows.filter((row) => row.used > 0).map((row) => [row.meter, row.used]))
  } finally {
    await client.end()
  }
}

const isAlive = (pid: number) => Fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(Fs.readFileSync(`/proc/${pid}/stat`, "utf8"))

/** A GET on a connection of its own, so that the requests spread over the processes. */
const get = (url: string, key: string) =>
  new Promise<{ status: number; body: { error?: { code: string } } }>((resolve, reject) => {
    const request = Http.get(url, { agent: false, headers: { "x-api-key": key } }, (response) => {
      let body = ""
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(body) }))
    })
    request.on("error", reject)
  })

describe("API_PROCESSES=2", () => {
  it("runs two API processes whose per-minute limit and allowances are exact together", async () => {
    expect(apiProcesses(server.child.pid!)).toHaveLength(2)
    const { id, keys } = await cliAccount(env, {
      owner: "Two processes",
      plan: "custom",
      custom: ["--rpm", "60", "--plate-queries", "45", "--unique-plates", "unlimited"],
      environments: ["production"]
    })
    // the whole burst within one minute window
    await waitFor(() => (new Date().getUTCSeconds() < 40 ? true : undefined), "the start of a minute", 25_000)
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) =>
      get(
        i % 4 === 3
          ? `${server.productionUrl}/v1/vehicles/basic?plate=AB${String(100 + i).slice(-3)}CD`
          : `${server.productionUrl}/v2/vehicles/AB${String(100 + i).slice(-3)}CD`,
        keys.production
      )))
    const count = (status: number, code?: string) =>
      answers.filter((a) => a.status === status && (code === undefined || a.body.error?.code === code)).length
    expect({
      ok: count(200),
      quota: count(429, "quota_exceeded"),
      perMinute: count(429, "rate_limit_exceeded")
    }).toEqual({ ok: 45, quota: 15, perMinute: 40 })

    const counters = await countersOf(id)
    const v1Answered = answers.filter((a, i) => i % 4 === 3 && a.status === 200).length
    expect(counters).toEqual({
      requests: 60,
      plate_queries: 45,
      unique_plates: 45,
      // the day's count, for the console's chart, charged with the month's
      "day:plate_queries": 45,
      "v1:plate_queries": v1Answered,
      "v2:plate_queries": 45 - v1Answered
    })
  }, 60_000)

  it("replaces an API process that dies, and stops them all on SIGTERM", async () => {
    const [victim] = apiProcesses(server.child.pid!)
    process.kill(victim!, "SIGKILL")
    await waitFor(() => (server.output().includes(`API process ${victim} exited (SIGKILL); starting another`) ? true : undefined), "a replacement")
    const replaced = await waitFor(() => {
      const now = apiProcesses(server.child.pid!)
      return now.length === 2 && !now.includes(victim!) ? now : undefined
    }, "two API processes again")
    const { keys } = await cliAccount(env, { owner: "After", plan: "growth", environments: ["production"] })
    const answers = await Promise.all(Array.from({ length: 6 }, () => get(`${server.productionUrl}/v2/vehicles/KLM456`, keys.production)))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200])

    expect(await server.stop("SIGTERM")).toBe(0)
    await waitFor(() => (replaced.every((pid) => !isAlive(pid)) ? true : undefined), "the API processes to stop")
  }, 60_000)
})
