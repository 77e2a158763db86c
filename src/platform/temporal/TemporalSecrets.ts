/**
 * What keeps Temporal from reading personal data: workflow payloads encrypted with
 * TEMPORAL_CODEC_KEYS, plate hashes keyed with PLATE_HASH_SALT, and the codec endpoint (which
 * decrypts for the Temporal UI) guarded by CODEC_SERVER_TOKEN. Every process that talks to
 * Temporal resolves them here, the same way:
 *
 * - a value set in the environment is used;
 * - on the embedded database (no DATABASE_URL), whatever is missing is generated once into
 *   `DATA_DIR/temporal-secrets.json`, so the worker started next to the API reads the same;
 * - with DATABASE_URL, a missing one stops the process with one line, unless
 *   TEMPORAL_PAYLOADS=clear says on purpose that payloads go in clear (then warned at start).
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import type { PayloadCodec } from "@temporalio/common"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/Config.js"
import { describeCause, StartupError, startupError } from "../process/Startup.js"
import { makeAesGcmCodec, parseKeyRing } from "./TemporalCodec.js"

/** The secrets by the names of the settings that give them. */
export const SECRET_SETTINGS = ["TEMPORAL_CODEC_KEYS", "PLATE_HASH_SALT", "CODEC_SERVER_TOKEN"] as const
export type SecretSetting = typeof SECRET_SETTINGS[number]
type SecretValues = Readonly<Record<SecretSetting, string>>

export const SECRETS_FILE = "temporal-secrets.json"

/** How an operator makes them; named in every refusal. */
export const HOW_TO_MAKE_SECRETS = "make them with `npx vda temporal secrets` and keep them stable"

/** Used only with TEMPORAL_PAYLOADS=clear and no PLATE_HASH_SALT: public, so warned at start. */
export const DEVELOPMENT_PLATE_HASH_SALT = "vda-development-plate-hash-salt"

/** A fresh set: a 32-byte AES key named after today, a salt and a token of 32 random bytes. */
export const generateSecrets = (now: Date): SecretValues => ({
  TEMPORAL_CODEC_KEYS: `vda-${now.toISOString().slice(0, 10).replaceAll("-", "")}:${randomBytes(32).toString("base64")}`,
  PLATE_HASH_SALT: randomBytes(32).toString("base64url"),
  CODEC_SERVER_TOKEN: randomBytes(32).toString("base64url")
})

export interface TemporalSecretsShape {
  /** `encrypted` unless TEMPORAL_PAYLOADS=clear. */
  readonly payloads: "encrypted" | "clear"
  /** The payload codec; absent with TEMPORAL_PAYLOADS=clear, or for a process that only hashes. */
  readonly codec: Option.Option<PayloadCodec>
  readonly plateHashSalt: Redacted.Redacted<string>
  /** The codec endpoint's token; absent only with TEMPORAL_PAYLOADS=clear, or in a process that serves no endpoint. */
  readonly codecServerToken: Option.Option<Redacted.Redacted<string>>
  /** Where the values came from ("from the environment", "read from FILE"…), for the banner; never the values. */
  readonly source: string
  /** What the banner must say at warn. */
  readonly warnings: ReadonlyArray<string>
}

export class TemporalSecrets extends Context.Service<TemporalSecrets, TemporalSecretsShape>()("vda/TemporalSecrets") {}

/**
 * Who asks, and what it needs: the API starts workflows (payloads and hashes); the worker runs them
 * and serves the codec endpoint (the token too); `vda plates hash` only hashes.
 */
const ROLES = {
  api: { who: "WORKFLOW_ENGINE=temporal", needs: ["TEMPORAL_CODEC_KEYS", "PLATE_HASH_SALT"] },
  worker: { who: "the worker", needs: SECRET_SETTINGS },
  hashes: { who: "`vda plates hash`", needs: ["PLATE_HASH_SALT"] }
} as const satisfies Record<string, { readonly who: string; readonly needs: ReadonlyArray<SecretSetting> }>

export type TemporalRole = keyof typeof ROLES

const needed = (role: TemporalRole): ReadonlyArray<SecretSetting> => ROLES[role].needs

const listed = (names: ReadonlyArray<string>) =>
  names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`

const readSecretsFile = (file: string) =>
  Effect.tryPromise(() => Fs.readFile(file, "utf8")).pipe(
    Effect.map((text) => Option.some(JSON.parse(text) as Partial<SecretValues>)),
    Effect.catch((error) =>
      (error.cause as NodeJS.ErrnoException | undefined)?.code === "ENOENT"
        ? Effect.succeed(Option.none())
        : Effect.fail(startupError("DATA_DIR", Path.dirname(file), `cannot read ${file} (${describeCause(error.cause)})`, `fix its permissions, or remove it to make new secrets (histories encrypted with the old key will no longer decrypt)`))
    )
  )

/**
 * The data directory's secrets, made on first use. Made whole and linked into place, so two
 * processes starting at once never read half a file, and the second keeps the first one's.
 */
const dataDirectorySecrets = Effect.fnUntraced(function*(dataDir: string, now: Date) {
  const file = Path.join(dataDir, SECRETS_FILE)
  const existing = yield* readSecretsFile(file)
  if (Option.isSome(existing)) return { values: existing.value, made: false, file }
  const scratch = `${file}.${process.pid}.tmp`
  const made = yield* Effect.tryPromise(async () => {
    await Fs.mkdir(dataDir, { recursive: true })
    await Fs.writeFile(scratch, `${JSON.stringify(generateSecrets(now), null, 2)}\n`, { mode: 0o600 })
    try {
      await Fs.link(scratch, file)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
      throw error
    } finally {
      await Fs.rm(scratch, { force: true })
    }
  }).pipe(Effect.mapError((error) =>
    startupError("DATA_DIR", dataDir, `cannot write ${file} (${describeCause(error.cause)})`, "make the data directory writable")
  ))
  const values = yield* readSecretsFile(file)
  return { values: Option.getOrElse(values, (): Partial<SecretValues> => ({})), made, file }
})

const redacted = (value: string | undefined) => (value === undefined || value === "" ? Option.none() : Option.some(Redacted.make(value)))

export const resolveTemporalSecrets = Effect.fnUntraced(function*(role: TemporalRole) {
  const config = yield* AppConfig
  const given: Partial<Record<SecretSetting, Option.Option<Redacted.Redacted<string>>>> = {
    TEMPORAL_CODEC_KEYS: config.temporal.codecKeys,
    PLATE_HASH_SALT: config.plateHashSalt,
    CODEC_SERVER_TOKEN: config.temporal.codecServer.token
  }
  const clear = config.temporal.payloads === "clear"
  const wanted = clear ? [] : needed(role)
  const missing = wanted.filter((name) => Option.isNone(given[name]!))

  let source = "from the environment"
  const values = { ...given }
  if (missing.length > 0 || (clear && Option.isNone(config.plateHashSalt) && Option.isNone(config.databaseUrl))) {
    if (Option.isSome(config.databaseUrl)) {
      return yield* new StartupError({
        message: `${listed(missing)} ${missing.length > 1 ? "are" : "is"} not set: ` +
          `${ROLES[role].who} with DATABASE_URL needs ${listed(needed(role))} ` +
          `(${HOW_TO_MAKE_SECRETS}), or TEMPORAL_PAYLOADS=clear to send workflow payloads in clear on purpose`
      })
    }
    const stored = yield* dataDirectorySecrets(config.dataDir, new Date())
    for (const name of SECRET_SETTINGS) if (Option.isNone(values[name]!)) values[name] = redacted(stored.values[name])
    source = `${stored.made ? "generated into" : "read from"} ${stored.file}${missing.length < wanted.length ? " and the environment" : ""}`
  }

  const warnings: Array<string> = []
  if (clear) warnings.push("TEMPORAL_PAYLOADS=clear: workflow payloads (plates, results) reach Temporal in clear; unset it to encrypt them")
  const salt = Option.getOrElse(values.PLATE_HASH_SALT!, () => {
    warnings.push("PLATE_HASH_SALT is not set: plate hashes use the public development salt, so they can be reversed")
    return Redacted.make(DEVELOPMENT_PLATE_HASH_SALT)
  })
  const keys = values.TEMPORAL_CODEC_KEYS!
  const codec = clear || Option.isNone(keys)
    ? Option.none()
    : yield* Effect.try({
      try: () => Option.some(makeAesGcmCodec(parseKeyRing(Redacted.value(keys.value)))),
      catch: (error) => startupError("TEMPORAL_CODEC_KEYS", "<redacted>", describeCause(error), HOW_TO_MAKE_SECRETS)
    })
  return TemporalSecrets.of({
    payloads: clear ? "clear" : "encrypted",
    codec,
    plateHashSalt: salt,
    codecServerToken: clear ? Option.none() : values.CODEC_SERVER_TOKEN!,
    source,
    warnings
  })
})

export const temporalSecretsLayer = (role: TemporalRole) => Layer.effect(TemporalSecrets, resolveTemporalSecrets(role))

/** The banner's lines about them: where they came from at info, what is weakened at warn. */
export const announceTemporalSecrets = Effect.gen(function*() {
  const secrets = yield* TemporalSecrets
  yield* Effect.logInfo(`Temporal payloads ${secrets.payloads}; secrets ${secrets.source}`)
  for (const warning of secrets.warnings) yield* Effect.logWarning(warning)
})
