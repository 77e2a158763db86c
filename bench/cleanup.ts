/**
 * What the bench must undo (processes, PostgreSQL clusters, temporary directories), undone in
 * reverse order on success, on failure and on SIGINT/SIGTERM.
 */
import { killCommands } from "./processes.js"

const undo: Array<{ readonly what: string; readonly run: () => Promise<unknown> }> = []
let cleaning: Promise<void> | undefined
let interrupted = false

/** Whether a signal ended the bench (its failures after that are the signal's doing). */
export const wasInterrupted = () => interrupted

export const onCleanup = (what: string, run: () => Promise<unknown>) => {
  undo.push({ what, run })
}

export const cleanUp = () =>
  cleaning ??= (async () => {
    killCommands()
    while (undo.length > 0) {
      const step = undo.pop()!
      try {
        await step.run()
      } catch (error) {
        console.error(`cleanup: ${step.what}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  })()

export const cleanUpOnSignals = () => {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    process.on(signal, () => {
      interrupted = true
      if (cleaning === undefined) console.error(`\n${signal}: stopping the targets and removing what the bench made…`)
      void cleanUp().finally(() => process.exit(code))
    })
  }
}
