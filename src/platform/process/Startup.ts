/**
 * What stops a process before it serves: a setting it cannot work with (a port in use, an
 * unreadable file, a database it cannot reach, a missing secret). Each is one line for the
 * operator, naming the setting, its value and what to do, logged at error without a stack; the
 * process exits with code 1 before it announces any listener.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, Data, Effect, Exit, Option, Schema } from "effect"
import { logFormat } from "../config/Config.js"
import { formatLine, gatheredStdout, type LogFormat } from "../observability/Logging.js"
import { issuesOf } from "../decoding/SchemaIssues.js"

export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}

/** `SETTING=value: what is wrong; what to do`. */
export const startupError = (setting: string, value: string | number, problem: string, remedy: string) =>
  new StartupError({ message: `${setting}=${value}: ${problem}; ${remedy}` })

/** A listen that failed, as the operator reads it: the setting behind the port, and what to do. */
export const listenError = (setting: string, host: string, port: number, error: unknown) => {
  const code = (error as { code?: unknown } | undefined)?.code
  if (code === "EADDRINUSE") {
    return startupError(setting, port, `${host}:${port} is already in use (another instance?)`, `stop what holds it, or set ${setting} to a free port (0 picks one)`)
  }
  if (code === "EACCES") {
    return startupError(setting, port, `not allowed to listen on ${host}:${port}`, `use a port above 1023, or set ${setting} to a free port`)
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return startupError(setting, port, `${host} is not an address of this machine`, "check the matching host setting")
  }
  return startupError(setting, port, `cannot listen on ${host}:${port} (${describeCause(error)})`, `set ${setting} to a free port`)
}

/** An error's own message (or its code), without a stack. */
export const describeCause = (error: unknown): string => {
  if (error instanceof Error) {
    const nested = (error as { cause?: unknown }).cause
    // wrappers such as the SQL client's "Failed to connect" hide the reason in `cause`, maybe several deep
    if (nested instanceof Error && nested.message !== "") return describeCause(nested)
    return error.message || String((error as { code?: unknown }).code ?? "unknown error")
  }
  return String(error)
}

/** A setting's value as the operator may see it in a line: secrets are never shown. */
const shownValue = (name: string) => {
  const value = process.env[name]
  if (value === undefined) return "unset"
  return /KEY|SECRET|TOKEN|SALT|PASSWORD|URL/.test(name) ? "<redacted>" : JSON.stringify(value)
}

/** `NAME=value: what is wrong` for each setting a configuration error names. */
const configErrorLine = (error: Config.ConfigError): string => {
  if (!Schema.isSchemaError(error.cause)) return error.cause.message
  return issuesOf(error.cause.issue).map(({ message, path }) => {
    const name = (path ?? []).map(String).join("_")
    return name === "" ? message : `${name}=${shownValue(name)}: ${message}`
  }).join("; ")
}

/** The one line of a start-up failure, or none when the failure is a bug (reported with its cause). */
export const startupLine = (cause: Cause.Cause<unknown>): string | undefined => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isNone(failure)) return undefined
  const error = failure.value
  if (error instanceof StartupError) return error.message
  if (error instanceof Config.ConfigError) return `configuration: ${configErrorLine(error)}`
  return undefined
}

const formatOfEnvironment: Effect.Effect<LogFormat> = logFormat.pipe(Effect.orElseSucceed(() => "json" as const))

/**
 * Reports why a process stopped, in LOG_FORMAT even when the configuration itself failed: a
 * start-up failure as its one line, anything else (a bug) with its cause. The line goes after
 * whatever the log still gathers (written out when the process exits).
 */
export const reportFailure = (cause: Cause.Cause<unknown>): void => {
  if (Cause.hasInterruptsOnly(cause)) return
  const line = startupLine(cause)
  const format = Effect.runSync(formatOfEnvironment)
  const text = line === undefined
    ? formatLine(format, new Date(), "ERROR", "stopped by an unexpected error", { cause: Cause.pretty(cause) })
    : formatLine(format, new Date(), "ERROR", line, {})
  gatheredStdout(text)
}

/**
 * A rejected promise's cause: a StartupError or a configuration error (Effect 4's `runPromise`
 * rejects with the failure itself) as a failure, anything else as a defect.
 */
export const causeOfRejection = (error: unknown): Cause.Cause<unknown> =>
  error instanceof StartupError || error instanceof Config.ConfigError ? Cause.fail(error) : Cause.die(error)

/** Starts a listener; a failure to listen becomes the StartupError of its setting. */
export const listening = async <A>(setting: string, host: string, port: number, listen: () => Promise<A>): Promise<A> => {
  try {
    return await listen()
  } catch (error) {
    throw listenError(setting, host, port, error)
  }
}

/** Runs a process's main effect; how it stopped, if it failed, goes to the log (`reportFailure`), then exit code 1. */
export const runMain = <E, A>(effect: Effect.Effect<A, E>) =>
  NodeRuntime.runMain(Effect.tapCause(effect, (cause) => Effect.sync(() => reportFailure(cause))), {
    disableErrorReporting: true,
    // a stop asked for (SIGTERM, SIGINT) that drained cleanly is a success, as orchestrators expect
    teardown: (exit, onExit) => onExit(Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? 1 : 0)
  })
