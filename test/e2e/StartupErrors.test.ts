/**
 * What stops the API (`node src/start.js`) and the worker (`node worker/start.js`) before they
 * serve: a port in use, a file that cannot be read, a database URL that is wrong or unreachable,
 * a missing secret. Each ends the process with exit code 1 and one line at error that names the
 * setting, its value and what to do; no stack, no cause, and no listener announced before it.
 */
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"
import { freshDatabase } from "../support/Postgres.js"
import { runToExit, startServer } from "../support/Processes.js"

const SECRETS = { TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS, PLATE_HASH_SALT: "startup-test-salt", CODEC_SERVER_TOKEN: "startup-test-token" }

const held: Array<Net.Server> = []
/** A port on 127.0.0.1 that something else holds for the whole file. */
const heldPort = async () => {
  const server = Net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  held.push(server)
  return (server.address() as Net.AddressInfo).port
}
/** A port nothing listens on. */
const closedPort = async () => {
  const server = Net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

let databaseUrl: string
beforeAll(async () => {
  databaseUrl = await freshDatabase()
})
afterAll(async () => {
  for (const server of held) await new Promise((resolve) => server.close(resolve))
})

const apiEnv = (env: Record<string, string>) => ({
  DATABASE_URL: databaseUrl,
  HOST: "127.0.0.1",
  PORT: "0",
  SANDBOX_PORT: "0",
  ADMIN_PORT: "0",
  LOG_FORMAT: "json",
  ...env
})

const workerEnv = (env: Record<string, string>) => ({
  DATABASE_URL: databaseUrl,
  TEMPORAL_ADDRESS: "127.0.0.1:1",
  CODEC_SERVER_PORT: "0",
  LOG_FORMAT: "json",
  ...SECRETS,
  ...env
})

const jsonLines = (output: string) =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>)

/** The process ended with code 1, and its last line is exactly `message`, at error, alone. */
const expectRefusal = async (entry: string, env: Record<string, string>, message: string) => {
  const { code, output } = await runToExit(entry, env)
  expect(code, output).toBe(1)
  const lines = jsonLines(output)
  expect(lines.at(-1), output).toEqual({ timestamp: expect.any(String), level: "error", message })
  expect(lines.filter((line) => line.level === "error"), output).toHaveLength(1)
  // nothing was announced, and nothing but log lines was written (no stack)
  expect(output).not.toMatch(/listening|metrics on|worker polling|codec endpoint http/)
  expect(output.split("\n").filter((line) => line !== "" && !line.startsWith("{")), output).toEqual([])
  expect(output).not.toMatch(/\n\s+at |"cause"/)
  return lines
}

describe("the API refuses to start, in one line", () => {
  for (const setting of ["PORT", "SANDBOX_PORT", "ADMIN_PORT"]) {
    it(`${setting} in use`, async () => {
      const port = await heldPort()
      await expectRefusal(
        "src/start.js",
        apiEnv({ [setting]: String(port) }),
        `${setting}=${port}: 127.0.0.1:${port} is already in use (another instance?); stop what holds it, or set ${setting} to a free port (0 picks one)`
      )
    }, 60_000)
  }

  it("DATABASE_URL that is not a URL, not PostgreSQL's, or not reachable", async () => {
    await expectRefusal(
      "src/start.js",
      apiEnv({ DATABASE_URL: "postgres//missing-colon" }),
      "DATABASE_URL=<not a URL>: not a PostgreSQL URL; use postgres://USER:PASSWORD@HOST:5432/DATABASE"
    )
    await expectRefusal(
      "src/start.js",
      apiEnv({ DATABASE_URL: "mysql://me:hunter2@db.example:3306/vda" }),
      "DATABASE_URL=mysql://me:***@db.example:3306/vda: mysql: is not a PostgreSQL URL; use postgres://USER:PASSWORD@HOST:5432/DATABASE"
    )
    const port = await closedPort()
    const lines = await expectRefusal(
      "src/start.js",
      apiEnv({ DATABASE_URL: `postgres://me:hunter2@127.0.0.1:${port}/vda` }),
      `DATABASE_URL=postgres://me:***@127.0.0.1:${port}/vda: cannot connect to the database (connect ECONNREFUSED 127.0.0.1:${port}); check that PostgreSQL runs there and takes this user, password and database`
    )
    expect(JSON.stringify(lines)).not.toContain("hunter2")
  }, 60_000)

  it("a configuration value of the wrong kind", async () => {
    await expectRefusal("src/start.js", apiEnv({ PORT: "eighty" }), "configuration: PORT=\"eighty\": Expected a string representing a finite number")
  }, 60_000)

  it("WORKFLOW_ENGINE=temporal on DATABASE_URL without its secrets, naming both and how to make them", async () => {
    await expectRefusal(
      "src/start.js",
      apiEnv({ WORKFLOW_ENGINE: "temporal" }),
      "TEMPORAL_CODEC_KEYS and PLATE_HASH_SALT are not set: WORKFLOW_ENGINE=temporal with DATABASE_URL needs TEMPORAL_CODEC_KEYS and PLATE_HASH_SALT " +
        "(make them with `npx vda temporal secrets` and keep them stable), or TEMPORAL_PAYLOADS=clear to send workflow payloads in clear on purpose"
    )
    await expectRefusal(
      "src/start.js",
      apiEnv({ WORKFLOW_ENGINE: "temporal", PLATE_HASH_SALT: "only-the-salt" }),
      "TEMPORAL_CODEC_KEYS is not set: WORKFLOW_ENGINE=temporal with DATABASE_URL needs TEMPORAL_CODEC_KEYS and PLATE_HASH_SALT " +
        "(make them with `npx vda temporal secrets` and keep them stable), or TEMPORAL_PAYLOADS=clear to send workflow payloads in clear on purpose"
    )
  }, 60_000)

  it("a Temporal TLS file that cannot be read", async () => {
    await expectRefusal(
      "src/start.js",
      apiEnv({ WORKFLOW_ENGINE: "temporal", ...SECRETS, TEMPORAL_TLS_CA_FILE: "/nonexistent/ca.pem" }),
      "TEMPORAL_TLS_CA_FILE=/nonexistent/ca.pem: cannot read it (ENOENT: no such file or directory, open '/nonexistent/ca.pem'); give the path of a readable PEM file"
    )
  }, 60_000)

  it("starts with TEMPORAL_PAYLOADS=clear set on purpose, and says so at warn before it listens", async () => {
    const server = await startServer({ DATABASE_URL: databaseUrl, LOG_FORMAT: "json", WORKFLOW_ENGINE: "temporal", TEMPORAL_PAYLOADS: "clear", TEMPORAL_ADDRESS: "127.0.0.1:1" })
    try {
      const lines = jsonLines(server.output())
      const warnings = lines.filter((line) => line.level === "warn").map((line) => line.message)
      expect(warnings).toContain("TEMPORAL_PAYLOADS=clear: workflow payloads (plates, results) reach Temporal in clear; unset it to encrypt them")
      expect(warnings).toContain("PLATE_HASH_SALT is not set: plate hashes use the public development salt, so they can be reversed")
      const firstListening = lines.findIndex((line) => String(line.message).includes("listening"))
      const clear = lines.findIndex((line) => String(line.message).startsWith("TEMPORAL_PAYLOADS=clear"))
      expect(clear).toBeGreaterThan(-1)
      expect(clear).toBeLessThan(firstListening)
    } finally {
      await server.stop()
    }
  }, 60_000)
})

describe("the worker refuses to start, in one line", () => {
  it("WORKER_ADMIN_PORT in use", async () => {
    const port = await heldPort()
    await expectRefusal(
      "worker/start.js",
      workerEnv({ WORKER_ADMIN_PORT: String(port) }),
      `WORKER_ADMIN_PORT=${port}: 127.0.0.1:${port} is already in use (another instance?); stop what holds it, or set WORKER_ADMIN_PORT to a free port (0 picks one)`
    )
  }, 90_000)

  it("CODEC_SERVER_PORT in use (the codec endpoint runs wherever payloads are encrypted)", async () => {
    const port = await heldPort()
    await expectRefusal(
      "worker/start.js",
      workerEnv({ CODEC_SERVER_PORT: String(port) }),
      `CODEC_SERVER_PORT=${port}: 127.0.0.1:${port} is already in use (another instance?); stop what holds it, or set CODEC_SERVER_PORT to a free port (0 picks one)`
    )
  }, 90_000)

  it("DATABASE_URL without the secrets, naming the three and how to make them", async () => {
    await expectRefusal(
      "worker/start.js",
      workerEnv({ TEMPORAL_CODEC_KEYS: "", PLATE_HASH_SALT: "", CODEC_SERVER_TOKEN: "" }),
      "TEMPORAL_CODEC_KEYS, PLATE_HASH_SALT and CODEC_SERVER_TOKEN are not set: the worker with DATABASE_URL needs TEMPORAL_CODEC_KEYS, PLATE_HASH_SALT and CODEC_SERVER_TOKEN " +
        "(make them with `npx vda temporal secrets` and keep them stable), or TEMPORAL_PAYLOADS=clear to send workflow payloads in clear on purpose"
    )
  }, 90_000)

  it("a client certificate that cannot be read", async () => {
    await expectRefusal(
      "worker/start.js",
      workerEnv({ TEMPORAL_TLS_CERT_FILE: "/nonexistent/client.pem", TEMPORAL_TLS_KEY_FILE: "/nonexistent/client.key" }),
      "TEMPORAL_TLS_CERT_FILE=/nonexistent/client.pem: cannot read it (ENOENT: no such file or directory, open '/nonexistent/client.pem'); give the path of a readable PEM file"
    )
  }, 90_000)
})
