/**
 * A real Temporal server for the live tests: the Java test server that sits beside a checkout at
 * `../shared/temporal-test-server/` (or wherever `TEMPORAL_TEST_SERVER` points), started on a
 * port from the OS. It keeps everything in memory, so stopping it and starting it again on the
 * same port is a total loss of Temporal's state, which the chaos tests use on purpose.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

/** How to run the live Temporal tests when no server is found; printed once per run. */
export const HOW_TO_RUN_LIVE =
  "Temporal live tests skipped: set TEMPORAL_ADDRESS to a Temporal server, or put the Java test server at ../shared/temporal-test-server (README, \"Live Temporal tests\")"

/** The test server's start script, when there is one beside the checkout. */
export const findRunScript = (): string | undefined => {
  const dir = process.env.TEMPORAL_TEST_SERVER ?? Path.resolve(ROOT, "../shared/temporal-test-server")
  const script = Path.join(dir, "run.sh")
  return Fs.existsSync(script) ? script : undefined
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = Net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as Net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect({ port, host: "127.0.0.1" })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

export interface TemporalServer {
  readonly address: string
  readonly port: number
  /** Kills the server (SIGKILL: everything it held is gone) and waits until it has exited. */
  stop(): Promise<void>
}

/**
 * Starts the server on `port` (a free one by default) and resolves once it accepts connections.
 * The first start on a machine without Java installs one (`run.sh` does), hence the long deadline.
 */
export const startTemporalServer = async (runScript: string, port?: number, deadlineMs = 180_000): Promise<TemporalServer> => {
  const chosen = port ?? (await freePort())
  const child: ChildProcess = spawn("bash", [runScript, String(chosen)], { stdio: ["ignore", "ignore", "pipe"] })
  let output = ""
  child.stderr!.on("data", (chunk) => (output = (output + chunk).slice(-4_000)))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + deadlineMs
  while (!(await accepts(chosen))) {
    if (gone) throw new Error(`the Temporal test server exited before it listened:\n${output}`)
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`the Temporal test server did not listen on ${chosen} within ${deadlineMs} ms:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    address: `127.0.0.1:${chosen}`,
    port: chosen,
    stop: async () => {
      if (!gone) child.kill("SIGKILL")
      await exited
      // the port is free again once nothing accepts on it
      while (await accepts(chosen)) await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}
