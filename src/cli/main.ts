/**
 * Entry point of `vda`. Exit codes: 0 done, 1 unknown account or key (or a failure), 2 bad arguments.
 * Logs go to stderr so that `--json` output stays one object on stdout.
 */
import { NodeServices } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Logger, Option, References } from "effect"
import { CliError } from "effect/cli"
import { AppConfig } from "../platform/config/Config.js"
import { InvalidLines } from "../platform/decoding/JsonLines.js"
import { runCli } from "./Cli.js"

const LoggingLive = Layer.unwrap(Effect.gen(function*() {
  const explicit = process.env.LOG_LEVEL !== undefined
  const level = explicit ? (yield* AppConfig).logLevel : "Warn"
  return Layer.mergeAll(
    Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
})).pipe(Layer.provide(AppConfig.layer))

const describeInvalidLines = ({ path, problems }: InvalidLines) =>
  [
    `${path}: ${problems.length} invalid line${problems.length > 1 ? "s" : ""}, nothing imported`,
    ...problems.map((p) => `${path}:${p.line}: ${p.message}`)
  ].join("\n")

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): { readonly code: number; readonly message?: string } => {
  if (Exit.isSuccess(exit)) return { code: 0 }
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (CliError.isCliError(error)) {
      // already explained by the parser; help shown because no subcommand was named is no failure
      return { code: error._tag === "ShowHelp" && error.errors.length === 0 ? 0 : 2 }
    }
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

const program = Effect.suspend(() => runCli(process.argv.slice(2))).pipe(
  Effect.provide(NodeServices.layer),
  Effect.provide(LoggingLive)
)

Effect.runPromiseExit(program).then((exit) => {
  const { code, message } = exitCodeOf(exit)
  if (message !== undefined) process.stderr.write(`vda: ${message}\n`)
  process.exitCode = code
})
