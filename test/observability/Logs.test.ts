/**
 * What the real server process writes, as a log collector reads it: `npm start`'s entry on a first
 * run of the embedded database, `LOG_FORMAT=json`. One JSON object per log line, the effective
 * configuration once at start (secrets masked), exactly one access-log line per request (route
 * template, status, size, duration, request id, account when authenticated), and never a key, a
 * full plate or the plate-hash salt. Then, briefly, `LOG_FORMAT=pretty` on the same data.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stopCluster } from "../../src/platform/db/EmbeddedPostgres.js"
import { ROOT, runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"

/** Recognisable, so that any leak of it shows. */
const SALT = "salt-0bservab1l1ty-Logs-7f3e9a"

/** A plate of the demo registry (imported on the first run): the vehicle query finds it. */
let plate: string
let dataDir: string
let env: Record<string, string>

beforeAll(async () => {
  const registry = await Fs.readFile(Path.join(ROOT, "data", "registry.jsonl"), "utf8")
  plate = JSON.parse(registry.split("\n")[0]!).plate
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-logs-"))
  await Fs.chmod(dataDir, 0o755)
  env = { DATA_DIR: dataDir, LOG_LEVEL: "info", PLATE_HASH_SALT: SALT, SANDBOX_MODULE_LATENCY_MS: "50" }
})

afterAll(async () => {
  if (dataDir === undefined) return
  await stopCluster({ clusterDir: Path.join(dataDir, "postgres") }).catch(() => undefined)
  await Fs.rm(dataDir, { recursive: true, force: true })
})

type Line = Record<string, unknown>

/** Every line of the output that is a JSON object, parsed (failing on one that does not parse). */
const jsonLines = (output: string): Array<Line> =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => {
    try {
      return JSON.parse(line) as Line
    } catch {
      throw new Error(`a log line starting with { is not JSON: ${line}`)
    }
  })

interface Made {
  readonly what: string
  readonly method: string
  readonly route: string
  readonly status: number
  readonly requestId: string
  readonly authenticated: boolean
}

describe("LOG_FORMAT=json", () => {
  let server: ServerProcess
  let output = ""
  let key: string
  let accountId: string
  let demoKeys: Array<string>
  const made: Array<Made> = []

  beforeAll(async () => {
    server = await startServer({ ...env, LOG_FORMAT: "json" })
    // the first-run banner (plain text, by design the only place the demo keys are ever shown)
    const banner = await waitFor(
      () => /account\s+(acct_\S+)\n\s+production\s+(vda_live_\S+)\n\s+sandbox\s+(vda_test_\S+)/.exec(server.output()) ?? undefined,
      "the first-run banner"
    )
    accountId = banner[1]!
    demoKeys = [banner[2]!, banner[3]!]
    // a key of our own, made with the CLI beside the server: it must never show in the output
    const created = await runVda(["keys", "create", "--account", accountId, "--environment", "production", "--json"], env)
    expect(created.code, created.stderr).toBe(0)
    key = JSON.parse(created.stdout).key

    const request = async (
      what: string,
      method: string,
      path: string,
      route: string,
      status: number,
      authenticated: boolean,
      body?: unknown
    ) => {
      const res = await fetch(`${server.productionUrl}${path}`, {
        method,
        headers: {
          ...(authenticated ? { "x-api-key": key } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      expect(res.status, `${what}: ${text}`).toBe(status)
      const requestId = res.headers.get("x-request-id")
      expect(requestId, what).toBeTruthy()
      made.push({ what, method, route, status, requestId: requestId!, authenticated })
      return text
    }
    const found = JSON.parse(await request("found vehicle", "GET", `/v2/vehicles/${plate}`, "/v2/vehicles/{plate}", 200, true))
    expect(found).toMatchObject({ success: true, found: true })
    await request("no key", "GET", `/v2/vehicles/${plate}`, "/v2/vehicles/{plate}", 401, false)
    await request("unknown path", "GET", "/v2/nothing-here", "unmatched", 404, true)
    await request("modules", "POST", `/v2/vehicles/${plate}/modules`, "/v2/vehicles/{plate}/modules", 202, true, {
      modules: ["fines", "vtv"]
    })

    expect(await server.stop("SIGTERM")).toBe(0)
    output = server.output()
  }, 60_000)

  afterAll(async () => {
    if (server?.child.exitCode === null) await server.stop("SIGKILL")
  })

  it("every line that starts with { is a JSON object with an ISO timestamp, a level and a message", () => {
    const lines = jsonLines(output)
    expect(lines.length).toBeGreaterThan(made.length)
    for (const line of lines) {
      expect(typeof line.timestamp, JSON.stringify(line)).toBe("string")
      expect(new Date(line.timestamp as string).toISOString(), JSON.stringify(line)).toBe(line.timestamp)
      expect(["debug", "info", "warn", "warning", "error", "fatal"], JSON.stringify(line)).toContain(line.level)
      expect(typeof line.message, JSON.stringify(line)).toBe("string")
    }
    // the process's own lines are all JSON: the listeners', the first run's, the shutdown's
    expect(lines.map((line) => line.message)).toEqual(expect.arrayContaining([
      "configuration",
      expect.stringMatching(/^demo data imported/),
      expect.stringMatching(/^production API listening on http:/),
      expect.stringMatching(/^sandbox API listening on http:/),
      expect.stringMatching(/^metrics on http:/)
    ]))
  })

  it("writes exactly one access-log line per request, with its route template, status, size and request id", () => {
    const access = jsonLines(output).filter((line) => line.message === "request")
    expect(access).toHaveLength(made.length)
    for (const request of made) {
      const lines = access.filter((line) => line.requestId === request.requestId)
      expect(lines, request.what).toHaveLength(1)
      const line = lines[0]!
      expect(line, request.what).toMatchObject({
        level: "info",
        method: request.method,
        route: request.route,
        status: request.status,
        environment: "production",
        requestId: request.requestId
      })
      expect(typeof line.durationMs, request.what).toBe("number")
      expect(line.durationMs as number, request.what).toBeGreaterThanOrEqual(0)
      expect(typeof line.bytes, request.what).toBe("number")
      expect(line.bytes as number, request.what).toBeGreaterThan(0)
      if (request.authenticated) expect(line.accountId, request.what).toBe(accountId)
      else expect(line, request.what).not.toHaveProperty("accountId")
    }
  })

  it("logs the effective configuration once at start, secrets masked, with the Node.js that runs it (24 or later)", () => {
    const configuration = jsonLines(output).filter((line) => line.message === "configuration")
    expect(configuration).toHaveLength(1)
    expect(Number(String(configuration[0]!.node).split(".")[0])).toBeGreaterThanOrEqual(24)
    expect(configuration[0]).toMatchObject({
      level: "info",
      port: 0,
      sandboxPort: 0,
      host: "127.0.0.1",
      logFormat: "json",
      logLevel: "info",
      plateHashSalt: "<redacted>"
    })
    expect(output).not.toContain(SALT)
  })

  it("never writes a key or a full plate", () => {
    expect(output).not.toContain(key)
    for (const form of [plate, plate.toLowerCase()]) expect(output).not.toContain(form)
    // the first-run banner prints the demo keys once, by design: nothing after it may
    const banner = output.indexOf("First run: created a demo account")
    expect(banner).toBeGreaterThan(-1)
    const bannerEnd = output.indexOf("\n\n", banner)
    expect(bannerEnd).toBeGreaterThan(banner)
    const afterBanner = output.slice(bannerEnd)
    // the requests were made after it, so their lines are in what is checked
    expect(afterBanner).toContain(`"requestId":"${made[0]!.requestId}"`)
    for (const demo of demoKeys) {
      expect(output.split(demo)).toHaveLength(3) // the keys line and the curl line
      expect(afterBanner).not.toContain(demo)
    }
  })
})

describe("LOG_FORMAT=pretty", () => {
  it("writes access-log lines for people: not JSON, the route template as route=…", async () => {
    // the same data directory: a second start, no first run
    const server = await startServer({ ...env, LOG_FORMAT: "pretty" })
    try {
      const res = await fetch(`${server.productionUrl}/v2/vehicles/${plate}`)
      expect(res.status).toBe(401)
      const requestId = res.headers.get("x-request-id")!
      await res.arrayBuffer()
      const line = await waitFor(
        () => server.output().split("\n").find((l) => l.includes(`requestId=${requestId}`)),
        "the access-log line"
      )
      expect(line.startsWith("{")).toBe(false)
      expect(() => JSON.parse(line)).toThrow()
      expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO +request /)
      expect(line).toContain(" route=/v2/vehicles/{plate}")
      expect(line).toContain(" status=401")
      expect(line).toContain(" method=GET")
      expect(line).not.toContain(plate)
      expect(server.output()).not.toContain("First run")
      expect(server.output()).not.toContain(SALT)
    } finally {
      expect(await server.stop("SIGTERM")).toBe(0)
    }
  }, 30_000)
})
