/**
 * The package as an integrator gets it: `npm pack` (which builds it) into a temporary directory,
 * the tarball installed into an empty project of its own, a consumer module type-checked there
 * with this project's compiler (`nodenext`) and run on the pinned Node. The webhooks entry signs
 * and parses a delivery; the client and webhooks entries load no package but `effect`; the server
 * entry's types are there, and importing it starts nothing. A second consumer uses both clients
 * against a server started here: a vehicle query, a module operation waited to its end, a 429 as
 * its typed error, and that operation's webhook delivery, received over HTTPS and parsed.
 * package.json's `exports` are build/entries.ts's.
 *
 * The install takes the packages from the local npm cache (about 30 s, most of it writing the
 * server's dependencies), and leaves out optional dependencies and install scripts: the embedded
 * PostgreSQL's binaries, esbuild's and swc's platform packages, the runtime's download. None is
 * needed to type-check or to load the entries, and they would add some 270 MB to write.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { builtFiles, ENTRIES, exportsOf } from "../../build/entries.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, ROOT, type ServerProcess, startServer } from "../support/Processes.js"
import { FAST_RETRY, makeTlsFixture, type TlsFixture, trustingReceiver } from "../support/WebhookReceiver.js"

const manifest = JSON.parse(Fs.readFileSync(Path.join(ROOT, "package.json"), "utf8"))
const NODE = Path.join(ROOT, "node_modules", "node", "bin", "node")
const TSC = Path.join(ROOT, "node_modules", ".bin", "tsc")

/** Our environment without npm's own settings of the run we are in (its prefix, its cache…). */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))

/**
 * Runs a command to its end (killed after `timeoutMs`), with `extraEnv` added to our environment,
 * its time logged; its output, unless it failed.
 */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs = 60_000, extraEnv: Record<string, string> = {}) => {
  const started = Date.now()
  const result = spawnSync(command, args, { cwd, env: { ...env, ...extraEnv }, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs })
  const took = ((Date.now() - started) / 1000).toFixed(1)
  console.log(`${[Path.basename(command), ...args.slice(0, 2)].join(" ")}: ${took} s`)
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status ?? result.signal}\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

const CONSUMER = `
import { parseWebhookEvent, signWebhook, WebhookEventError, type ReceivedWebhookEvent } from "vehicle-data-api/webhooks"
import type { runServer, ServerLive } from "vehicle-data-api/server"

const secret = "whsec_consumer"
const body = JSON.stringify({
  id: "evt_1",
  type: "webhook.test",
  apiVersion: "v2",
  createdAt: "2026-11-27T12:00:00.000Z",
  data: { message: "hello" }
})
const timestamp = String(Math.floor(Date.now() / 1000))
const headers = {
  "X-Service-Signature": signWebhook(secret, timestamp, body),
  "X-Service-Timestamp": timestamp,
  "X-Service-Event": "v2.webhook.test"
}

const received: ReceivedWebhookEvent = parseWebhookEvent(Buffer.from(body), headers, secret)
let message = ""
let createdAt = ""
if (received.event === "v2.webhook.test") {
  message = received.payload.data.message
  createdAt = received.payload.createdAt.toISOString()
  // @ts-expect-error: a test event's data is no Operation
  void received.payload.data.status
}

let reason: string | undefined
try {
  parseWebhookEvent(body, headers, "whsec_other")
} catch (error) {
  if (error instanceof WebhookEventError) reason = error.reason
}

// the server entry's types
// @ts-expect-error: runServer takes no arguments
const extra: Parameters<typeof runServer> = ["--port"]
// @ts-expect-error: ServerLive is a Layer, not a function
type Called = ReturnType<typeof ServerLive>

console.log(JSON.stringify({ event: received.event, eventId: received.eventId, message, createdAt, reason }))
`

/**
 * Both clients against a running server, on a sandbox account of one plate query a month: the
 * Effect client points the webhook at this process, queries a plate and runs a module operation
 * to its end; the Promise client's plate query is then refused (429); the operation's delivery
 * arrives here and is parsed. VDA_BASE_URL, VDA_API_KEY, TLS_KEY_FILE and TLS_CERT_FILE (the
 * receiver's certificate, which the server trusts) come from the test.
 */
const INTEGRATION = `
import * as Fs from "node:fs"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { makePromiseClient, VehicleDataApiError, VehicleDataClient } from "vehicle-data-api/client"
import { parseWebhookEvent, type ReceivedWebhookEvent } from "vehicle-data-api/webhooks"

const baseUrl = process.env.VDA_BASE_URL!
const apiKey = process.env.VDA_API_KEY!

let secret = ""
let onDelivery: (received: ReceivedWebhookEvent) => void = () => {}
const delivered = new Promise<ReceivedWebhookEvent>((resolve) => (onDelivery = resolve))
const receiver = Https.createServer({ key: Fs.readFileSync(process.env.TLS_KEY_FILE!), cert: Fs.readFileSync(process.env.TLS_CERT_FILE!) }, (request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    onDelivery(parseWebhookEvent(Buffer.concat(chunks), request.headers, secret))
    response.writeHead(200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const { port } = receiver.address() as AddressInfo

const withEffect = Effect.gen(function*() {
  const api = yield* VehicleDataClient
  const config = yield* api.webhooks.updateWebhookConfig({ payload: { url: \`https://127.0.0.1:\${port}/hooks\`, enabled: true } })
  secret = config.secret
  const answer = yield* api.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: {} })
  const vehicle = "found" in answer ? { found: answer.found, plate: answer.data?.plate } : undefined
  const created = yield* api.operations.createModulesOperation({ params: { plate: "AB000CD" }, payload: { modules: ["fines", "vtv"] } })
  const operation = yield* api.waitForOperation(created.id, { deadline: "30 seconds" })
  return { vehicle, created: created.id, operation: { id: operation.id, kind: operation.kind, status: operation.status } }
}).pipe(Effect.provide(VehicleDataClient.layerFetch({ baseUrl, apiKey })))
const effectResults = await Effect.runPromise(withEffect)

const promises = makePromiseClient({ baseUrl, apiKey })
let refused: unknown
try {
  await promises.vehicles.getVehicle({ params: { plate: "AC456BD" }, query: {} })
} catch (error) {
  refused = error
}
const error = refused instanceof VehicleDataApiError
  ? { code: refused.code, status: refused.status, requestId: refused.requestId, retryable: refused.retryable, meter: refused.details?.meter }
  : String(refused)

const received = await delivered
receiver.close()
const webhook = received.event === "v2.modules.completed" || received.event === "v2.modules.failed"
  ? { event: received.event, operationId: received.payload.data.id, status: received.payload.data.status }
  : { event: received.event }

console.log(JSON.stringify({ ...effectResults, error, webhook }))
`

/**
 * An entry's exports, and what importing it loads (as the URLs it resolves show them): the
 * packages, and Node's own modules.
 */
const LOADS = `
import { registerHooks } from "node:module"
const packages = new Set()
const builtins = new Set()
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context)
    const inPackage = resolved.url.split("/node_modules/").slice(1).at(-1)
    if (inPackage !== undefined) packages.add(/^(?:@[^/]+\\/)?[^/]+/.exec(inPackage)[0])
    if (resolved.url.startsWith("node:")) builtins.add(resolved.url)
    return resolved
  }
})
const entry = await import(process.argv[2])
console.log(JSON.stringify({ exports: Object.keys(entry).sort(), packages: [...packages].sort(), builtins: [...builtins].sort() }))
`

/** Node's modules that serve or open connections: the server's, not a client's. */
const SERVER_BUILTINS = ["node:http", "node:https", "node:http2", "node:net", "node:tls"]

let dir: string
let project: string
let tarball: string
let packed: ReadonlyArray<string>
let tls: TlsFixture
let server: ServerProcess
let sandboxKey: string

beforeAll(() => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "vda-package-"))
  run("npm", ["pack", "--pack-destination", dir, "--loglevel=warn"], ROOT, 120_000)
  tarball = Path.join(dir, Fs.readdirSync(dir).find((name) => name.endsWith(".tgz"))!)
  packed = run("tar", ["-tzf", tarball], dir).split("\n").filter((line) => line !== "").map((line) => line.replace(/^package\//, ""))

  project = Path.join(dir, "consumer")
  Fs.mkdirSync(project)
  Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  run("npm", [
    "install",
    tarball,
    `@types/node@${manifest.devDependencies["@types/node"]}`,
    // what an integrator of the Effect client installs beside it
    `effect@${manifest.dependencies.effect}`,
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
    "--omit=optional",
    "--ignore-scripts",
    "--loglevel=error"
  ], project, 180_000)
  Fs.writeFileSync(Path.join(project, "consumer.ts"), CONSUMER)
  Fs.writeFileSync(Path.join(project, "integration.ts"), INTEGRATION)
  Fs.writeFileSync(Path.join(project, "loads.mjs"), LOADS)
  Fs.writeFileSync(Path.join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "ES2023",
      // effect's own declarations name Web Crypto's types
      lib: ["ES2023", "DOM"],
      module: "nodenext",
      moduleResolution: "nodenext",
      types: ["node"],
      strict: true,
      noEmit: true,
      // the shipped declarations are checked too
      skipLibCheck: false,
      verbatimModuleSyntax: true
    },
    files: ["consumer.ts", "integration.ts"]
  }))
}, 300_000)

beforeAll(async () => {
  tls = await makeTlsFixture()
  Fs.writeFileSync(Path.join(project, "receiver.key"), tls.key)
  Fs.writeFileSync(Path.join(project, "receiver.crt"), tls.cert)
  const serverEnv = { DATABASE_URL: await freshDatabase(), ...trustingReceiver(tls), ...FAST_RETRY, SANDBOX_MODULE_LATENCY_MS: "50" }
  // one plate query a month: the second is refused with a 429 at once
  sandboxKey = (await cliAccount(serverEnv, {
    owner: "Package consumer",
    plan: "custom",
    custom: ["--plate-queries", "1", "--rpm", "unlimited"],
    environments: ["sandbox"]
  })).keys.sandbox
  server = await startServer(serverEnv)
}, 60_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  await tls?.dispose()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("package.json", () => {
  it("exports each entry of build/entries.ts, from an existing source", () => {
    expect(manifest.exports).toEqual(exportsOf(ENTRIES))
    for (const source of Object.values(ENTRIES)) expect(Fs.existsSync(Path.join(ROOT, source)), source).toBe(true)
  })
})

describe("the tarball", () => {
  it("holds each entry's code and declarations, and what the server reads at run time", () => {
    for (const [name, source] of Object.entries(ENTRIES)) {
      const { code, types } = builtFiles(name, source)
      expect(packed).toContain(code)
      expect(packed).toContain(types)
    }
    expect(packed).toContain("data/catalog.jsonl")
    expect(packed).toContain("src/console/assets/console.css")
    expect(packed).toContain(manifest.bin.vda)
  })

  it("holds no tests, benchmarks, data directories or caches", () => {
    expect(packed.filter((file) => /^(test|bench|\.data|node_modules|\.ci)\//.test(file) || file.includes(".cache/"))).toEqual([])
  })
})

describe("installed into an empty project", () => {
  it("type-checks consumers of the client, webhooks and server entries, and the declarations they reach", () => {
    const result = spawnSync(TSC, ["-p", "tsconfig.json"], { cwd: project, env, encoding: "utf8", timeout: 120_000 })
    expect(result.stdout + result.stderr).toBe("")
    expect(result.status).toBe(0)
  }, 120_000)

  it("runs it on the pinned Node: a delivery signed, parsed, and refused with another secret", () => {
    const output = run(NODE, ["consumer.ts"], project)
    expect(JSON.parse(output)).toEqual({
      event: "v2.webhook.test",
      eventId: "evt_1",
      message: "hello",
      createdAt: "2026-11-27T12:00:00.000Z",
      reason: "signature"
    })
  }, 60_000)

  it("runs both clients against a started server: a query, an operation to its end, a 429, its webhook", () => {
    const results = JSON.parse(run(NODE, ["integration.ts"], project, 60_000, {
      VDA_BASE_URL: server.sandboxUrl,
      VDA_API_KEY: sandboxKey,
      TLS_KEY_FILE: Path.join(project, "receiver.key"),
      TLS_CERT_FILE: Path.join(project, "receiver.crt")
    }))
    expect(results.vehicle).toEqual({ found: true, plate: "AB123CD" })
    expect(results.operation).toEqual({ id: results.created, kind: "modules", status: "completed" })
    expect(results.error).toEqual({ code: "quota_exceeded", status: 429, requestId: expect.stringMatching(/^req_/), retryable: true, meter: "plate_queries" })
    expect(results.webhook).toEqual({ event: "v2.modules.completed", operationId: results.created, status: "completed" })
  }, 60_000)

  const CLIENT_ENTRIES = {
    client: ["makePromiseClient", "VehicleDataApiError", "VehicleDataClient"],
    "client/testing": ["layerLocalSandbox", "layerTest", "makeLocalSandboxPromiseClient", "makeTestPromiseClient"]
  }
  for (const [entry, names] of Object.entries(CLIENT_ENTRIES)) {
    it(`the ${entry} entry loads no package but effect, and nothing that serves`, () => {
      const { exports, packages, builtins } = JSON.parse(run(NODE, ["loads.mjs", `vehicle-data-api/${entry}`], project))
      expect(exports).toEqual(expect.arrayContaining(names))
      expect(packages).toContain("vehicle-data-api")
      expect(packages.filter((name: string) => name !== "vehicle-data-api" && name !== "effect")).toEqual([])
      expect(builtins.filter((name: string) => SERVER_BUILTINS.includes(name))).toEqual([])
    }, 60_000)
  }

  it("the webhooks entry loads no package but effect", () => {
    const { exports, packages } = JSON.parse(run(NODE, ["loads.mjs", "vehicle-data-api/webhooks"], project))
    expect(exports).toEqual(expect.arrayContaining(["parseWebhookEvent", "parseWebhookEventEffect", "signWebhook", "verifyWebhookSignature", "WebhookEventError"]))
    expect(packages).toContain("vehicle-data-api")
    expect(packages.filter((name: string) => name !== "vehicle-data-api" && name !== "effect")).toEqual([])
  }, 60_000)

  it("importing the server entry loads the server's packages and starts nothing", () => {
    const { exports, packages, builtins } = JSON.parse(run(NODE, ["loads.mjs", "vehicle-data-api/server"], project))
    expect(exports).toEqual(["ServerLive", "runServer"])
    // what the checks above would have caught
    expect(packages).toEqual(expect.arrayContaining(["@effect/sql-pg", "@effect/platform-node", "@temporalio/client"]))
    expect(builtins).toEqual(expect.arrayContaining(["node:http", "node:net"]))
  }, 60_000)
})
