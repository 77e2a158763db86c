/**
 * Every setting the service reads, in one place. Documented in the README's configuration table.
 */
import { Config, ConfigError, Effect, Either, LogLevel, Option, Redacted } from "effect"

const port = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: "expected a port number between 0 and 65535", validation: (n) => n >= 0 && n <= 65535 })
  )

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: "expected a positive integer", validation: (n) => n > 0 })
  )

const optionalUrl = (name: string) =>
  Config.option(Config.string(name)).pipe(
    Config.map(Option.filter((url) => url.length > 0)),
    Config.validate({
      message: "expected an http(s) URL",
      validation: Option.match({ onNone: () => true, onSome: (url) => /^https?:\/\/\S+$/.test(url) })
    })
  )

const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapOrFail((raw) => {
    const level = LogLevel.allLevels.find((l) => l.label.toLowerCase() === raw.toLowerCase() ||
      l._tag.toLowerCase() === raw.toLowerCase())
    return level
      ? Either.right(level)
      : Either.left(ConfigError.InvalidData(["LOG_LEVEL"], `unknown log level "${raw}" (use error, warn, info or debug)`))
  })
)

export class AppConfig extends Effect.Service<AppConfig>()("vda/AppConfig", {
  effect: Effect.gen(function*() {
    return {
      host: yield* Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
      port: yield* port("PORT", 8080),
      sandboxPort: yield* port("SANDBOX_PORT", 8081),
      databaseUrl: yield* Config.option(Config.redacted("DATABASE_URL")).pipe(
        Config.map(Option.filter((url) => Redacted.value(url).length > 0))
      ),
      dataDir: yield* Config.string("DATA_DIR").pipe(Config.withDefault(".data")),
      dbPoolMax: yield* positiveInt("DB_POOL_MAX", 10),
      logLevel: yield* logLevel,
      vehicleUpstreamUrl: yield* optionalUrl("VEHICLE_UPSTREAM_URL"),
      sandboxLatencyMs: yield* Config.integer("SANDBOX_MODULE_LATENCY_MS").pipe(
        Config.withDefault(1500),
        Config.validate({ message: "expected milliseconds >= 0", validation: (n) => n >= 0 })
      )
    }
  })
}) {}
