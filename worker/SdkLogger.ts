/**
 * The Temporal SDK's own log lines (worker state changes, the native core's warnings) in the
 * process's format and at its level, so LOG_FORMAT=json gives one JSON object per line here too.
 */
import type { Logger, LogLevel as SdkLevel, LogMetadata } from "@temporalio/common"
import { LogLevel } from "effect"
import { formatLine, levelLabel, type LogFields, type LogFormat } from "../src/platform/observability/Logging.js"

const LEVELS: Record<SdkLevel, LogLevel.LogLevel> = {
  TRACE: "Trace",
  DEBUG: "Debug",
  INFO: "Info",
  WARN: "Warn",
  ERROR: "Error"
}

const fieldsOf = (meta: LogMetadata): LogFields => {
  const fields: Record<string, string | number | boolean> = {}
  for (const [name, value] of Object.entries(meta)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") fields[name] = value
    else if (value instanceof Error) fields[name] = value.message
    else if (value !== undefined) fields[name] = JSON.stringify(value)
  }
  return fields
}

export const sdkLogger = (format: LogFormat, minimum: LogLevel.LogLevel, write: (line: string) => void = (line) => void process.stdout.write(line + "\n")): Logger => {
  const log = (level: SdkLevel, message: string, meta: LogMetadata = {}) => {
    const mapped = LEVELS[level]
    if (LogLevel.isLessThan(mapped, minimum)) return
    write(formatLine(format, new Date(), levelLabel(mapped), message, fieldsOf(meta)))
  }
  return {
    log,
    trace: (message, meta) => log("TRACE", message, meta),
    debug: (message, meta) => log("DEBUG", message, meta),
    info: (message, meta) => log("INFO", message, meta),
    warn: (message, meta) => log("WARN", message, meta),
    error: (message, meta) => log("ERROR", message, meta)
  }
}
