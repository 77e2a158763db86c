/**
 * Entry point of `vda`. Exit codes: 0 done, 1 unknown account or key (or a failure), 2 bad arguments.
 * Logs go to stderr so that `--json` output stays one object on stdout.
 */
import { ValidationError } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Logger, LogLevel, Option } from "effect"
import { AppConfig } from "../platform/Config.js"
import { InvalidLines } from "../platform/JsonLines.js"
import { runCli } from "./Cli.js"

const LoggingLive = Layer.unwrapEffect(Effect.gen(function*() {
  const explicit = process.env.LOG_LEVEL !== undefined
  const level = explicit ? (yield* AppConfig).logLevel : LogLevel.Warning
  return Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
    Logger.minimumLogLevel(level)
  )
})).pipe(Layer.provide(AppConfig.Default))

const describeInvalidLines = ({ path, problems }: InvalidLines) =>
  [
    `${path}: ${problems.length} invalid line${problems.length > 1 ? "s" : ""}, nothing imported`,
    ...problems.map((p) => `${path}:${p.line}: ${p.message}`)
  ].join("\n")

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): { readonly code: number; readonly message?: string } => {
  if (Exit.isSuccess(exit)) return { code: 0 }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (ValidationError.isValidationError(error)) return { code: 2 } // already explained by the parser
    if (error instanceof InvalidLines) return { code: 1, message: describeInvalidLines(error) }
    const tagged = error as { readonly _tag?: string; readonly id?: string; readonly message?: string }
    switch (tagged._tag) {
      case "UsageError":
        return { code: 2, message: tagged.message ?? "invalid arguments" }
      case "AccountNotFound":
        return { code: 1, message: `unknown account ${tagged.id}` }
      case "KeyNotFound":
        return { code: 1, message: `unknown key ${tagged.id}` }
      case "FileUnreadable":
        return { code: 1, message: tagged.message ?? "cannot read the file" }
      case "StartupError":
        return { code: 1, message: tagged.message ?? "cannot start" }
    }
  }
  return { code: 1, message: Cause.pretty(exit.cause) }
}

const program = Effect.suspend(() => runCli(process.argv)).pipe(
  Effect.provide(NodeContext.layer),
  Effect.provide(LoggingLive)
)

Effect.runPromiseExit(program).then((exit) => {
  const { code, message } = exitCodeOf(exit)
  if (message !== undefined) process.stderr.write(`vda: ${message}\n`)
  process.exitCode = code
})
