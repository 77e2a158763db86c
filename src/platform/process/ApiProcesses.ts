/**
 * `API_PROCESSES=N`: N API processes (node:cluster) sharing the listeners' ports, on one database.
 * The primary owns the database and the workers' lives: it starts them, replaces one that dies,
 * and stops them all (each draining its requests) before the database on shutdown. Every limit
 * stays exact across processes because metering is decided in the database (`vda_consume`).
 */
import Cluster, { type Worker } from "node:cluster"
import { Deferred, Effect } from "effect"
import { startupError } from "./Startup.js"

/** What a worker tells the primary once its listeners are open. */
interface Listening {
  readonly _tag: "vda/listening"
  readonly urls: ReadonlyArray<string>
}

const isListening = (message: unknown): message is Listening =>
  typeof message === "object" && message !== null && (message as { _tag?: unknown })._tag === "vda/listening"

export const isApiWorker = Cluster.isWorker

const INDEX_VARIABLE = "VDA_API_PROCESS_INDEX"

/**
 * This process's place among the API processes (0 for a single process), kept by a replacement:
 * what keeps a per-process port (the admin listener's) stable.
 */
export const apiProcessIndex = (): number => Number(process.env[INDEX_VARIABLE] ?? 0) || 0

/** In a worker: tells the primary the listeners are open. */
export const reportListening = (urls: ReadonlyArray<string>) =>
  Effect.sync(() => {
    if (Cluster.isWorker) process.send?.({ _tag: "vda/listening", urls } satisfies Listening)
  })

const stopWorker = (worker: Worker, graceMs: number) =>
  Effect.callback<void>((resume) => {
    if (worker.isDead()) return resume(Effect.void)
    const cut = setTimeout(() => worker.process.kill("SIGKILL"), graceMs)
    worker.once("exit", () => {
      clearTimeout(cut)
      resume(Effect.void)
    })
    worker.process.kill("SIGTERM")
  })

/**
 * Starts `count` workers with `env` and waits until each listens; answers the first one's URLs.
 * A worker that dies is replaced; closing the scope stops them all, each within `graceMs`.
 */
export const startApiProcesses = Effect.fnUntraced(function*(count: number, env: Record<string, string>, graceMs: number) {
  const runSync = Effect.runSyncWith(yield* Effect.context<never>())
  const log = (message: string) => runSync(Effect.logWarning(message))
  const workers = new Set<Worker>()
  let stopping = false

  const fork = (index: number, listening?: Deferred.Deferred<ReadonlyArray<string>, Error>) => {
    const worker = Cluster.fork({ ...env, [INDEX_VARIABLE]: String(index) })
    let listened = false
    workers.add(worker)
    worker.on("message", (message: unknown) => {
      if (!isListening(message)) return
      listened = true
      if (listening) runSync(Deferred.succeed(listening, message.urls))
    })
    worker.once("exit", (code, signal) => {
      workers.delete(worker)
      const how = signal ?? `code ${code}`
      if (stopping) return
      // one that never started would fail again: start-up fails instead
      if (!listened) {
        if (listening) runSync(Deferred.fail(listening, new Error(`an API process exited while starting (${how})`)))
        return
      }
      log(`API process ${worker.process.pid} exited (${how}); starting another`)
      fork(index)
    })
  }

  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      stopping = true
      return Effect.forEach([...workers], (worker) => stopWorker(worker, graceMs), { concurrency: "unbounded", discard: true })
    })
  )

  const started = yield* Effect.forEach(Array.from({ length: count }), (_, index) =>
    Effect.tap(Deferred.make<ReadonlyArray<string>, Error>(), (listening) => Effect.sync(() => fork(index, listening))))
  const urls = yield* Effect.forEach(started, Deferred.await).pipe(
    Effect.mapError((error) => startupError("API_PROCESSES", count, error.message, "the process's own line above says why"))
  )
  return urls[0] ?? []
})
