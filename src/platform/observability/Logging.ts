/**
 * Log lines, as LOG_FORMAT says: `json` (one object per line, for collectors) or `pretty` (for a
 * terminal). Every line carries what applies of the request id, trace and span ids, account id
 * and operation id: the request pipeline and the engines put them in the log annotations, and the
 * trace comes from the current span. The access log (`HttpObservation`) writes through the same
 * formatter, so every line of the process has one shape.
 *
 * Never pass a key, a secret, a full plate or a request body to a log: nothing here can tell them
 * apart from other text.
 */
import { writeSync } from "node:fs"
import { Cause, Context, Effect, Layer, Logger, LogLevel, References, Tracer } from "effect"
import { perText } from "../caching/PerObject.js"
import { CurrentRequest } from "../http/RequestContext.js"
import { AppConfig } from "../config/Config.js"
import { isRecordedSpan } from "./Telemetry.js"

export type LogFormat = "json" | "pretty"

export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>

// the access log writes a line per request: its timestamp is made once per millisecond, and its
// JSON is written out directly (a JSON.stringify of a fresh object costs twice as much)
let stampedAt = Number.NaN
let stamp = ""
const timestampAt = (at: number) => {
  if (at !== stampedAt) {
    stamp = new Date(at).toISOString()
    stampedAt = at
  }
  return stamp
}

/** Printable ASCII without `"` or `\`: what JSON writes as it is between quotes. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const jsonText = (text: string) => PLAIN_JSON_TEXT.test(text) ? `"${text}"` : JSON.stringify(text)
const jsonValue = (value: string | number | boolean) =>
  typeof value === "string" ? jsonText(value) : typeof value === "number" && !Number.isFinite(value) ? "null" : String(value)

/**
 * The JSON text of a name the code chose (a field name, a level: a known few), made once: the
 * access log writes a dozen per request.
 */
const jsonName = perText(jsonText)
/** A level as a JSON line writes it: `"info"` for `INFO`. */
const jsonLevel = perText((level: string) => jsonText(level.toLowerCase()))

const OWN_FIELDS = new Set(["timestamp", "level", "message"])

/** Formats one line; the level as the log shows it (`INFO`, `WARN`…). */
export const formatLine = (format: LogFormat, date: Date, level: string, message: string, fields: LogFields): string => {
  if (format === "json") {
    let line = `{"timestamp":"${timestampAt(date.getTime())}","level":${jsonLevel(level)},"message":${jsonText(message)}`
    for (const name in fields) {
      const value = fields[name]
      if (value !== undefined && !OWN_FIELDS.has(name)) line += "," + jsonName(name) + ":" + jsonValue(value)
    }
    return line + "}"
  }
  let text = `${timestampAt(date.getTime())} ${level.padEnd(5)} ${message}`
  for (const name in fields) {
    const value = fields[name]
    if (value === undefined) continue
    const shown = String(value)
    text += ` ${name}=${/[\s"=]/.test(shown) ? JSON.stringify(shown) : shown}`
  }
  return text
}

/** An access-log line's fields, in the order the line shows them. */
export interface RequestLine {
  readonly method: string
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly bytes: number
  readonly environment: string
  readonly requestId: string | undefined
  readonly accountId: string | undefined
  readonly traceId: string | undefined
}

/** The part of a JSON access line after its timestamp up to its status, made once per method and route. */
const requestHeads = new Map<string, Map<string, string>>()
const requestHeadOf = (method: string, route: string) => {
  let byRoute = requestHeads.get(method)
  if (byRoute === undefined) requestHeads.set(method, byRoute = new Map())
  let head = byRoute.get(route)
  if (head === undefined) {
    // a bounded few: Node's parser takes only the methods it knows, and routes are templates
    // (every unknown path has one route text)
    head = `","level":${jsonLevel("INFO")},"message":"request","method":${jsonText(method)},"route":${jsonText(route)}`
    byRoute.set(route, head)
  }
  return head
}
const environmentPart = perText((environment: string) => `,"environment":${jsonText(environment)}`)

/**
 * A request's access-log line at `at` (epoch milliseconds): what `formatLine(format, new Date(at),
 * "INFO", "request", fields)` writes, its constant parts made once (a line per request).
 */
export const formatRequestLine = (format: LogFormat, at: number, fields: RequestLine): string => {
  if (format !== "json") return formatLine(format, new Date(at), "INFO", "request", { ...fields })
  let line = `{"timestamp":"${timestampAt(at)}${requestHeadOf(fields.method, fields.route)},"status":${jsonValue(fields.status)}` +
    `,"durationMs":${jsonValue(fields.durationMs)},"bytes":${jsonValue(fields.bytes)}${environmentPart(fields.environment)}`
  if (fields.requestId !== undefined) line += `,"requestId":${jsonText(fields.requestId)}`
  if (fields.accountId !== undefined) line += `,"accountId":${jsonText(fields.accountId)}`
  if (fields.traceId !== undefined) line += `,"traceId":${jsonText(fields.traceId)}`
  return line + "}"
}

const messageOf = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => typeof part === "string" ? part : part instanceof Error ? part.message : JSON.stringify(part)).join(" ")
}

/** The trace and span ids of the current span, when tracing is on (a no-op span has none). */
export const traceFieldsOf = (context: Context.Context<never>): { traceId?: string; spanId?: string } => {
  const span = Context.getOption(context, Tracer.ParentSpan)
  if (span._tag === "None" || !isRecordedSpan(span.value)) return {}
  return { traceId: span.value.traceId, spanId: span.value.spanId }
}

/** A level as the log shows it: `INFO`, `WARN`… (Effect's names are `Info`, `Warn`…). */
export const levelLabel = (level: LogLevel.LogLevel) => level.toUpperCase()

const makeLogger = (format: LogFormat, write: (line: string) => void) =>
  Logger.make(({ cause, date, fiber, logLevel, message }) => {
    const fields: Record<string, string | number | boolean | undefined> = { ...traceFieldsOf(fiber.context) }
    // the request's id and account, and the annotations (which win), in name order: a line reads the same every time
    const request = fiber.getRef(CurrentRequest)
    const annotations: Record<string, unknown> = request === undefined
      ? fiber.getRef(References.CurrentLogAnnotations)
      : { requestId: request.requestId, accountId: request.accountId, ...fiber.getRef(References.CurrentLogAnnotations) }
    for (const name of Object.keys(annotations).sort()) {
      const value = annotations[name]
      if (value === undefined) continue
      fields[name] = typeof value === "string" || typeof value === "number" || typeof value === "boolean"
        ? value
        : JSON.stringify(value)
    }
    if (cause.reasons.length > 0) fields.cause = Cause.pretty(cause)
    write(formatLine(format, date, levelLabel(logLevel), messageOf(message), fields))
  })

/** Writes lines to standard output; swapped in tests to read what was logged. */
export type LineSink = (line: string) => void

/**
 * Lines to standard output gathered into a buffer and written at most GATHER_MS after the first of
 * them: a busy listener's access log costs one write for hundreds of lines (each write to a pipe
 * also wakes its reader), and no string is built to join them. Every line of the process goes
 * through it, so lines keep their order. At exit, what is still gathered is written synchronously
 * (retried while the pipe is full, for a bounded time).
 */
const GATHER_BYTES = 64 * 1024
const GATHER_MS = 20
const EXIT_WRITE_MS = 2_000

const writeAllSync = (bytes: Buffer) => {
  const deadline = Date.now() + EXIT_WRITE_MS
  let offset = 0
  while (offset < bytes.length && Date.now() < deadline) {
    try {
      offset += writeSync(1, bytes, offset)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return
    }
  }
}

const makeGatheredStdout = (): LineSink => {
  const buffer = Buffer.allocUnsafe(GATHER_BYTES)
  let used = 0
  const flush = () => {
    if (used === 0) return
    // a copy of what is used: the stream may hold it until the pipe drains, and the buffer is reused
    const gathered = Buffer.from(buffer.subarray(0, used))
    used = 0
    process.stdout.write(gathered)
  }
  process.once("exit", () => {
    if (used > 0) writeAllSync(Buffer.from(buffer.subarray(0, used)))
  })
  return (line) => {
    // a UTF-16 unit is at most 3 bytes of UTF-8: a line that surely fits is not measured first
    if (used + 3 * line.length + 1 > GATHER_BYTES) {
      const bytes = Buffer.byteLength(line) + 1
      if (used + bytes > GATHER_BYTES) {
        flush()
        if (bytes > GATHER_BYTES) return void process.stdout.write(line + "\n")
      }
    }
    if (used === 0) setTimeout(flush, GATHER_MS).unref()
    used += buffer.write(line, used)
    buffer[used++] = 10
  }
}

let gathered: LineSink | undefined
/** The process's one gathered standard output (made on first use): every line of the log, in order. */
export const gatheredStdout: LineSink = (line) => (gathered ??= makeGatheredStdout())(line)

/** An access-log writer: the same format and sink as the logger, without a fiber. */
export interface AccessLog {
  readonly enabled: boolean
  readonly write: (fields: RequestLine) => void
}

export const makeAccessLog = (format: LogFormat, minimum: LogLevel.LogLevel, on: boolean): AccessLog => ({
  enabled: on && !LogLevel.isGreaterThan(minimum, "Info"),
  write: (fields) => gatheredStdout(formatRequestLine(format, Date.now(), fields))
})

export const loggerLayer = (format: LogFormat, minimum: LogLevel.LogLevel, sink: LineSink = gatheredStdout) =>
  Layer.merge(Logger.layer([makeLogger(format, sink)]), Layer.succeed(References.MinimumLogLevel, minimum))

/** The logger AppConfig asks for. */
export const LoggingLive = Layer.unwrap(Effect.map(AppConfig, (config) => loggerLayer(config.logFormat, config.logLevel)))
