/**
 * Private by default, against a real Temporal server: `npm start` with the Temporal engine and
 * nothing else (the embedded database, no secrets set) generates a codec key, a plate-hash salt
 * and a codec-endpoint token into its data directory; the worker started next to it reads the
 * same. Payloads reach Temporal encrypted with that key, the workflow id carries the plate hashed
 * with that salt, and the codec endpoint decrypts them for operators who present the token.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { Client, Connection } from "@temporalio/client"
import { historyToJSON } from "@temporalio/common/lib/proto-utils.js"
import { Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { plateHash } from "../../src/platform/ids/PlateHash.js"
import { METADATA_KEY_ID, makeAesGcmCodec, parseKeyRing } from "../../src/platform/temporal/TemporalCodec.js"
import { SECRETS_FILE } from "../../src/platform/temporal/TemporalSecrets.js"
import { json } from "../support/TestApp.js"
import { runVda, type ServerProcess, startServer, startWorker, waitFor, type WorkerProcess } from "../support/Processes.js"

const address = inject("temporal").address
const PLATE = "AC456DE"

describe.skipIf(address === undefined)("private by default on the embedded database", () => {
  const taskQueue = `vda-private-${Date.now()}`
  let dataDir: string
  let env: Record<string, string>
  let server: ServerProcess
  let worker: WorkerProcess
  let connection: Connection

  beforeAll(async () => {
    dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-private-"))
    await Fs.chmod(dataDir, 0o755)
    env = {
      DATA_DIR: dataDir,
      LOG_FORMAT: "json",
      WORKFLOW_ENGINE: "temporal",
      TEMPORAL_ADDRESS: address!,
      TEMPORAL_TASK_QUEUE: taskQueue,
      SANDBOX_MODULE_LATENCY_MS: "50"
    }
    server = await startServer(env)
    worker = await startWorker({ ...env, CODEC_SERVER_PORT: "0", WORKER_ADMIN_PORT: "0" })
    connection = await Connection.connect({ address: address! })
  }, 180_000)

  afterAll(async () => {
    await worker?.stop()
    await server?.stop()
    await connection?.close()
    if (dataDir) await Fs.rm(dataDir, { recursive: true, force: true })
  })

  const secrets = async () => JSON.parse(await Fs.readFile(Path.join(dataDir, SECRETS_FILE), "utf8")) as Record<string, string>

  it("generates the secrets into the data directory on first start, readable by its owner only; the worker reads the same", async () => {
    const file = Path.join(dataDir, SECRETS_FILE)
    expect((await Fs.stat(file)).mode & 0o777).toBe(0o600)
    const values = await secrets()
    expect(Object.keys(values).sort()).toEqual(["CODEC_SERVER_TOKEN", "PLATE_HASH_SALT", "TEMPORAL_CODEC_KEYS"])
    expect(() => parseKeyRing(values.TEMPORAL_CODEC_KEYS!)).not.toThrow()
    expect(server.output()).toContain(`"message":"Temporal payloads encrypted; secrets generated into ${file}"`)
    expect(worker.output()).toContain(`"message":"Temporal payloads encrypted; secrets read from ${file}"`)
    // never their values
    for (const value of Object.values(values)) {
      expect(server.output()).not.toContain(value)
      expect(worker.output()).not.toContain(value)
    }
  })

  it("runs an operation with its payloads encrypted by that key and its plate hashed with that salt; the codec endpoint decrypts them with the token", async () => {
    const key = /sandbox\s+(vda_test_\S+)/.exec(server.output())![1]!
    const accountId = /account\s+(acct_\S+)/.exec(server.output())![1]!
    const created = await fetch(`${server.sandboxUrl}/v2/vehicles/${PLATE}/modules`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ modules: ["vtv", "gnc"] })
    })
    expect(created.status).toBe(202)
    const { id } = await json(created)
    const done = await waitFor(async () => {
      const body = await json(await fetch(`${server.sandboxUrl}/v2/operations/${id}`, { headers: { "x-api-key": key } }))
      return body.status === "completed" ? body : undefined
    }, "the operation to complete", 60_000)
    expect(done.modules.vtv.status).toBe("completed")

    const values = await secrets()
    const hash = plateHash(Redacted.make(values.PLATE_HASH_SALT!), PLATE)
    const workflowId = `modules/sandbox/${accountId}/${hash}/vtv+gnc/${id}`
    // the CLI computes the same hash from the same data directory
    expect((await runVda(["plates", "hash", PLATE], env)).stdout.trim()).toBe(hash)

    const ring = parseKeyRing(values.TEMPORAL_CODEC_KEYS!)
    const client = new Client({ connection, dataConverter: { payloadCodecs: [makeAesGcmCodec(ring)] } })
    const history = await client.workflow.getHandle(workflowId).fetchHistory()
    const raw = historyToJSON(history)
    expect(raw).not.toContain(PLATE)
    const input = history.events!.find((event) => event.workflowExecutionStartedEventAttributes)!
      .workflowExecutionStartedEventAttributes!.input!.payloads![0]!
    expect(Buffer.from(input.metadata![METADATA_KEY_ID]!).toString()).toBe(ring.current.id)

    // the codec endpoint, as the UI calls it: `vda temporal codec-endpoint` gives its address and token
    const endpoint = (await runVda(["temporal", "codec-endpoint"], env)).stdout.trim()
    expect(endpoint).toBe(`http://127.0.0.1:8888/${values.CODEC_SERVER_TOKEN}`)
    const port = /codec endpoint http:\/\/127\.0\.0\.1:(\d+) \(token required\)/.exec(worker.output())![1]
    const asJson = { metadata: Object.fromEntries(Object.entries(input.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString("base64")])), data: Buffer.from(input.data!).toString("base64") }
    const decode = (path: string) =>
      fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ payloads: [asJson] }) })
    expect((await decode("/decode")).status).toBe(401)
    const decoded = await decode(`/${values.CODEC_SERVER_TOKEN}/decode`)
    expect(decoded.status).toBe(200)
    const [clear] = (await decoded.json() as { payloads: Array<{ data: string }> }).payloads
    expect(JSON.parse(Buffer.from(clear!.data, "base64").toString("utf8"))).toMatchObject([{ operationId: id, modules: ["vtv", "gnc"] }][0]!)
  }, 120_000)
})
