/**
 * The examples in `examples/` run against a server started here, as an integrator runs them: each
 * with its environment variables, to its exit. They import `vehicle-data-api/*`, which
 * examples/tsconfig.json maps to the entries' sources (tsx reads the mapping), so they run against
 * this checkout without a build; that the built package answers to the same names is
 * test/packaging/Package.test.ts's part. The examples are type-checked with the same mapping.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ENTRIES } from "../../build/entries.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, ROOT, runToExit, type ServerProcess, startServer } from "../support/Processes.js"
import { FAST_RETRY, makeTlsFixture, type TlsFixture, trustingReceiver } from "../support/WebhookReceiver.js"

const EXAMPLES = Path.join(ROOT, "examples")
const TSCONFIG = Path.join(EXAMPLES, "tsconfig.json")

let tls: TlsFixture
let server: ServerProcess
let key: string

beforeAll(async () => {
  tls = await makeTlsFixture()
  const env = { DATABASE_URL: await freshDatabase(), ...trustingReceiver(tls), ...FAST_RETRY, SANDBOX_MODULE_LATENCY_MS: "50" }
  key = (await cliAccount(env, { owner: "Examples", plan: "custom", custom: ["--rpm", "unlimited"], environments: ["sandbox"] })).keys.sandbox
  server = await startServer(env)
}, 60_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  await tls?.dispose()
})

/** Runs an example to its end on the server's sandbox, through tsx with the examples' tsconfig. */
const runExample = (file: string, env: Record<string, string> = {}) =>
  runToExit(`examples/${file}`, {
    NODE_OPTIONS: "--import tsx",
    TSX_TSCONFIG_PATH: TSCONFIG,
    VDA_BASE_URL: server.sandboxUrl,
    VDA_API_KEY: key,
    ...env
  })

describe("examples/tsconfig.json", () => {
  it("maps each client and webhooks entry of build/entries.ts to its source", () => {
    const { compilerOptions } = JSON.parse(Fs.readFileSync(TSCONFIG, "utf8").replace(/^\s*\/\/.*$/gm, ""))
    const expected = Object.fromEntries(
      Object.entries(ENTRIES).filter(([name]) => name !== "server").map(([name, source]) => [`vehicle-data-api/${name}`, [`../${source}`]])
    )
    expect(compilerOptions.paths).toEqual(expected)
  })

  it("type-checks every example", () => {
    const result = spawnSync(Path.join(ROOT, "node_modules", ".bin", "tsc"), ["-p", TSCONFIG], { cwd: ROOT, encoding: "utf8", timeout: 120_000 })
    expect(result.stdout + result.stderr).toBe("")
    expect(result.status).toBe(0)
  }, 120_000)
})

describe("the examples, against a started server", () => {
  it("query-plate.ts queries a plate with the Effect client", async () => {
    const { code, output } = await runExample("query-plate.ts", { VDA_PLATE: "AB123CD" })
    expect(code, output).toBe(0)
    expect(output).toMatch(/^AB123CD: \S.* \d{4}, \S/)
  })

  it("module-operation.ts runs a module query and waits for its end", async () => {
    const { code, output } = await runExample("module-operation.ts", { VDA_PLATE: "AB000CD" })
    expect(code, output).toBe(0)
    const id = /^operation (op_\S+): (queued|processing)$/m.exec(output)?.[1]
    expect(id, output).toBeDefined()
    expect(output).toContain(`operation ${id}: completed`)
    expect(output).toMatch(/^ {2}fines: completed$/m)
    expect(output).toMatch(/^ {2}vtv: completed$/m)
  })

  it("promise-client.ts does the same with the Promise client", async () => {
    const { code, output } = await runExample("promise-client.ts", { VDA_PLATE: "AC000BD" })
    expect(code, output).toBe(0)
    expect(output).toMatch(/^AC000BD: \S/)
    const id = /^operation (op_\S+): (queued|processing)$/m.exec(output)?.[1]
    expect(id, output).toBeDefined()
    expect(output).toContain(`operation ${id}: completed`)
  })

  it("receive-webhook.ts receives a test delivery over HTTPS and verifies it", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "vda-example-tls-"))
    try {
      Fs.writeFileSync(Path.join(dir, "key.pem"), tls.key)
      Fs.writeFileSync(Path.join(dir, "cert.pem"), tls.cert)
      const { code, output } = await runExample("receive-webhook.ts", {
        TLS_KEY_FILE: Path.join(dir, "key.pem"),
        TLS_CERT_FILE: Path.join(dir, "cert.pem")
      })
      expect(code, output).toBe(0)
      const id = /^asked for test delivery (\S+)$/m.exec(output)?.[1]
      expect(id, output).toBeDefined()
      expect(output).toMatch(/^received v2\.webhook\.test evt_\S+$/m)
      expect(output).toMatch(/^ {2}message: \S/m)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
