/**
 * The start-up banner: the effective configuration, one `name=value` field per setting, so an
 * operator sees what the process actually runs with. Secrets are masked (`Redacted` values show
 * as set or unset, a database URL without its password).
 */
import { LogLevel, Option, Redacted } from "effect"

const MASKED = "<redacted>"

/** A connection URL with its password masked; anything unparseable masked whole. */
export const maskUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return MASKED
  }
}

const show = (value: unknown, name: string): string | number | boolean | undefined => {
  if (Redacted.isRedacted(value)) {
    return name === "databaseUrl" ? maskUrl(Redacted.value(value as Redacted.Redacted<string>)) : MASKED
  }
  // any address may carry credentials (user:password@), not only the database's
  if (typeof value === "string") return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? maskUrl(value) : value
  if (typeof value === "number" || typeof value === "boolean") return value
  if (Array.isArray(value)) return value.join(",")
  if (value === null || value === undefined) return undefined
  return undefined
}

/** Every leaf of `config` as a dotted name and a printable (masked) value. */
export const describeConfig = (config: object): Record<string, string | number | boolean> => {
  const fields: Record<string, string | number | boolean> = {}
  const walk = (value: unknown, path: ReadonlyArray<string>) => {
    const name = path[path.length - 1] ?? ""
    if (Option.isOption(value)) {
      if (Option.isNone(value)) fields[path.join(".")] = "unset"
      else walk(value.value, path)
      return
    }
    if (/loglevel$/i.test(name) && typeof value === "string" && (LogLevel.values as ReadonlyArray<string>).includes(value)) {
      // a LogLevel ("Info"), shown as LOG_LEVEL is written ("info")
      fields[path.join(".")] = value.toLowerCase()
      return
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value) && !Redacted.isRedacted(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key])
      return
    }
    const shown = show(value, name)
    if (shown !== undefined) fields[path.join(".")] = shown
  }
  walk(config, [])
  return fields
}

/** The start-up banner's fields: the Node.js that runs the process, then the configuration. */
export const startupBanner = (config: object): Record<string, string | number | boolean> => ({
  node: process.versions.node,
  ...describeConfig(config)
})
