/**
 * `vda`: the admin CLI. Reads the same configuration as the server and works beside a running
 * server on the same embedded database. `--json` prints exactly one JSON object on stdout.
 */
import { Console, Data, Effect, Layer, Option, Redacted } from "effect"
import { Argument, CliError, CliOutput, Command, Flag } from "effect/cli"
import { Accounts } from "../accounts/Accounts.js"
import { PlanId } from "../principal/Domain.js"
import type { EntitledAccountRow } from "../principal/AccountRows.js"
import { Catalog } from "../catalog/Catalog.js"
import { ConsoleSessions } from "../console/Sessions.js"
import { ModuleRegistry } from "../modules/Registry.js"
import { VehicleStore } from "../vehicles/Store.js"
import * as Imports from "./Imports.js"
import type { CustomPlanTerms, KeyRow } from "../accounts/Repo.js"
import { DEFAULT_TIMEZONE, isValidTimezone } from "../metering/Periods.js"
import { OpeningBalance } from "../metering/OpeningBalance.js"
import { AppConfig } from "../platform/config/Config.js"
import { DatabaseLive } from "../DatabaseLive.js"
import { plateHash } from "../platform/ids/PlateHash.js"
import { generateSecrets, resolveTemporalSecrets, SECRET_SETTINGS, TemporalSecrets, temporalSecretsLayer } from "../platform/temporal/TemporalSecrets.js"
import { MODULES as ALL_MODULES } from "../../workflows/shared.js"
import type { Module } from "../modules/Names.js"
import { normalizePlate } from "../vehicles/Plates.js"

const invalid = (message: string) => new CliError.ValidationError({ message })

/** A bad argument found once the command runs (exit code 2, like a parse error). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

const json = Flag.Boolean("json").pipe(Flag.withDescription("Print one JSON object on stdout"), Flag.withDefault(false))

const print = (asJson: boolean, value: unknown, human: string) =>
  Console.log(asJson ? JSON.stringify(value) : human)

const parseLimit = (flag: string) => (raw: string) => {
  if (raw === "unlimited") return Effect.succeed<number | null>(null)
  return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw))
    ? Effect.succeed<number | null>(Number(raw))
    : Effect.fail(invalid(`--${flag} must be a non-negative integer or "unlimited", got "${raw}"`))
}

const limitOption = (flag: string, description: string) =>
  Flag.String(flag).pipe(
    Flag.withDescription(`${description} (a number, or "unlimited")`),
    Flag.mapEffect(parseLimit(flag)),
    Flag.optional
  )

const nonNegativeInteger = (flag: string, description: string) =>
  Flag.String(flag).pipe(
    Flag.withDescription(description),
    Flag.mapEffect((raw) =>
      /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw))
        ? Effect.succeed(Number(raw))
        : Effect.fail(invalid(`--${flag} must be a non-negative integer, got "${raw}"`))
    )
  )

const nonNegativeOption = (flag: string, description: string) => nonNegativeInteger(flag, description).pipe(Flag.optional)

const parseModules = (raw: string) => {
  const names = raw.split(",").map((m) => m.trim()).filter((m) => m.length > 0)
  const unknown = names.filter((m) => !(ALL_MODULES as ReadonlyArray<string>).includes(m))
  if (names.length === 0) return Effect.fail(invalid(`--modules needs at least one of ${ALL_MODULES.join(",")}`))
  if (unknown.length > 0) {
    return Effect.fail(invalid(`--modules: unknown module ${unknown.join(", ")} (use ${ALL_MODULES.join(",")})`))
  }
  return Effect.succeed(ALL_MODULES.filter((m) => names.includes(m)) as ReadonlyArray<Module>)
}

const describeAccount = (account: EntitledAccountRow) => {
  const limit = (n: number | null) => (n === null ? "unlimited" : String(n))
  return [
    `${account.id}  owner=${JSON.stringify(account.owner)}  plan=${account.plan}  timezone=${account.timezone}`,
    `  plate queries/month ${limit(account.plateQueriesMonthly)}, module queries/month ${limit(account.moduleQueriesMonthly)}, ` +
    `unique plates/day ${limit(account.uniquePlatesDaily)}, requests/minute ${limit(account.requestsPerMinute)}, ` +
    `modules ${account.enabledModules.join(",")}` +
    (account.plan === "custom" ? `, module price ARS ${account.modulePriceArs}, included modules ${account.includedModules}` : "")
  ].join("\n")
}

const keyJson = (key: KeyRow) => ({
  id: key.id,
  environment: key.environment,
  name: key.name,
  prefix: key.prefix,
  last4: key.last4,
  status: key.revokedAt === null ? "active" : "revoked",
  createdAt: key.createdAt.toISOString(),
  revokedAt: key.revokedAt?.toISOString() ?? null,
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null
})

// accounts ------------------------------------------------------------------------------------

const accountsCreate = Command.make("create", {
  owner: Flag.String("owner").pipe(Flag.withDescription("Owner name shown in status")),
  plan: Flag.Literals("plan", PlanId.literals).pipe(Flag.withDefault("free" as PlanId)),
  timezone: Flag.String("timezone").pipe(
    Flag.withDescription("IANA timezone of the account's months and days"),
    Flag.withDefault(DEFAULT_TIMEZONE),
    Flag.mapEffect((tz) => (isValidTimezone(tz) ? Effect.succeed(tz) : Effect.fail(invalid(`--timezone: unknown IANA timezone "${tz}"`))))
  ),
  json
}, Effect.fnUntraced(function*({ json, owner, plan, timezone }) {
  if (owner.trim().length === 0) return yield* new UsageError({ message: "--owner must not be empty" })
  const accounts = yield* Accounts
  const account = yield* accounts.create({ owner: owner.trim(), plan, timezone })
  yield* print(json, { id: account.id, owner: account.owner, plan: account.plan, timezone: account.timezone },
    `created account ${account.id} (owner ${JSON.stringify(account.owner)}, plan ${account.plan}, timezone ${account.timezone})`)
})).pipe(Command.withDescription("Create an account"))

const accountsSetPlan = Command.make("set-plan", {
  accountId: Argument.String("ACCOUNT_ID"),
  plan: Argument.Literals("PLAN", PlanId.literals)
}, Effect.fnUntraced(function*({ accountId, plan }) {
  const account = yield* (yield* Accounts).setPlan(accountId, plan)
  yield* Console.log(describeAccount(account))
})).pipe(Command.withDescription("Move an account to another plan; usage already consumed is kept"))

const accountsSetCustom = Command.make("set-custom", {
  accountId: Argument.String("ACCOUNT_ID"),
  plateQueries: limitOption("plate-queries", "Monthly plate queries (the Basic cap)"),
  moduleQueries: limitOption("module-queries", "Monthly module queries (hard limit)"),
  uniquePlates: limitOption("unique-plates", "Unique plates per day"),
  rpm: limitOption("rpm", "Requests per minute"),
  modulePriceArs: nonNegativeOption("module-price-ars", "Price of one module query in ARS (default 550)"),
  includedModules: nonNegativeOption("included-modules", "Module queries included each month, per module (default 0)"),
  modules: Flag.String("modules").pipe(
    Flag.withDescription(`Enabled modules, comma-separated: ${ALL_MODULES.join(",")}`),
    Flag.mapEffect(parseModules),
    Flag.optional
  )
}, Effect.fnUntraced(function*(input) {
  const changes: { -readonly [K in keyof CustomPlanTerms]?: CustomPlanTerms[K] } = {}
  if (Option.isSome(input.plateQueries)) changes.plateQueriesMonthly = input.plateQueries.value
  if (Option.isSome(input.moduleQueries)) changes.moduleQueriesMonthly = input.moduleQueries.value
  if (Option.isSome(input.uniquePlates)) changes.uniquePlatesDaily = input.uniquePlates.value
  if (Option.isSome(input.rpm)) changes.requestsPerMinute = input.rpm.value
  if (Option.isSome(input.modulePriceArs)) changes.modulePriceArs = input.modulePriceArs.value
  if (Option.isSome(input.includedModules)) changes.includedModules = input.includedModules.value
  if (Option.isSome(input.modules)) changes.enabledModules = input.modules.value
  const account = yield* (yield* Accounts).setCustom(input.accountId, changes)
  yield* Console.log(describeAccount(account))
})).pipe(Command.withDescription(
    "Set the account's custom plan terms (unspecified ones are kept) and move it to the custom plan. " +
      "Module billing periods already open keep their frozen price and included units."
  ))

const accountsSetOpeningBalance = Command.make("set-opening-balance", {
  account: Flag.String("account"),
  environment: Flag.Literals("environment", ["production", "sandbox"]),
  plateQueries: nonNegativeInteger("plate-queries", "Plate queries already used this month in the old system")
}, Effect.fnUntraced(function*({ account, environment, plateQueries }) {
  const found = yield* (yield* Accounts).require(account)
  const month = yield* (yield* OpeningBalance).set({ accountId: found.id, environment, timezone: found.timezone, plateQueries })
  yield* Console.log(
    `opening balance of ${found.id} (${environment}) for the month from ${month.start.toISOString()}: ${plateQueries} plate queries`
  )
})).pipe(Command.withDescription("Carry over this month's plate queries from the old system (counts toward the monthly limit)"))

const accounts = Command.make("accounts").pipe(
  Command.withDescription("Manage accounts and plans"),
  Command.withSubcommands([accountsCreate, accountsSetPlan, accountsSetCustom, accountsSetOpeningBalance])
)

// keys ----------------------------------------------------------------------------------------

const keysCreate = Command.make("create", {
  account: Flag.String("account"),
  environment: Flag.Literals("environment", ["production", "sandbox"]),
  name: Flag.String("name").pipe(Flag.optional),
  json
}, Effect.fnUntraced(function*({ account, environment, json, name }) {
  const key = yield* (yield* Accounts).createKey({
    accountId: account,
    environment,
    name: Option.getOrNull(name)
  })
  yield* print(json, { id: key.id, key: key.key, environment: key.environment, prefix: key.prefix, last4: key.last4 }, [
    `created ${key.environment} key ${key.id}`,
    `  ${key.key}`,
    "Store it now: the secret is not shown again."
  ].join("\n"))
})).pipe(Command.withDescription("Create an API key; the secret is printed once"))

const keysList = Command.make("list", { account: Flag.String("account"), json }, Effect.fnUntraced(function*({ account, json }) {
  const keys = yield* (yield* Accounts).listKeys(account)
  const lines = keys.map((k) =>
    `${k.id}  ${k.environment.padEnd(10)}  ${k.prefix}…${k.last4}  ${(k.revokedAt === null ? "active" : "revoked").padEnd(7)}  ${k.name ?? ""}`
  )
  yield* print(json, { keys: keys.map(keyJson) }, lines.length > 0 ? lines.join("\n") : "no keys")
})).pipe(Command.withDescription("List an account's keys (never their secrets)"))

const keysRevoke = Command.make("revoke", { keyId: Argument.String("KEY_ID") }, Effect.fnUntraced(function*({ keyId }) {
  yield* (yield* Accounts).revokeKey(keyId)
  yield* Console.log(`revoked ${keyId}; it stops working on the next request`)
})).pipe(Command.withDescription("Revoke an API key immediately"))

const keys = Command.make("keys").pipe(
  Command.withDescription("Manage API keys"),
  Command.withSubcommands([keysCreate, keysList, keysRevoke])
)

// console -------------------------------------------------------------------------------------

const consoleLink = Command.make("link", {
  account: Flag.String("account"),
  environment: Flag.Literals("environment", ["production", "sandbox"]).pipe(Flag.withDefault("production" as const)),
  as: Flag.String("as").pipe(
    Flag.withDescription("Who signs in, as the console's audit records it (default: the account's owner)"),
    Flag.optional
  ),
  json
}, Effect.fnUntraced(function*({ account, as, environment, json }) {
  const link = yield* (yield* ConsoleSessions).issueLink({ accountId: account, environment, signsInAs: Option.getOrUndefined(as) })
  yield* print(json, { url: link.url, environment: link.environment, expiresAt: link.expiresAt.toISOString() }, [
    link.url,
    `One-time ${link.environment} console sign-in link; it expires at ${link.expiresAt.toISOString()}.`
  ].join("\n"))
})).pipe(Command.withDescription("Print a one-time sign-in link to an account's console"))

const consoleCommand = Command.make("console").pipe(
  Command.withDescription("The account console"),
  Command.withSubcommands([consoleLink])
)

// imports --------------------------------------------------------------------------------------

const importFile = Argument.File("FILE", { mustExist: true }).pipe(Argument.withDescription("A JSON Lines file"))

const catalogImport = Command.make("import", { file: importFile }, Effect.fnUntraced(function*({ file }) {
  const count = yield* Imports.importCatalog(file)
  yield* Console.log(`imported ${count} catalog versions from ${file}`)
})).pipe(Command.withDescription("Add or replace catalog versions (by codia); all lines are checked first, nothing is imported if one is invalid"))

const registryImport = Command.make("import", { file: importFile }, Effect.fnUntraced(function*({ file }) {
  const counts = yield* Imports.importRegistry(file)
  yield* Console.log(`imported ${Imports.describeRegistryCounts(counts)} from ${file}`)
})).pipe(Command.withDescription("Add or replace registry records; all lines are checked first, nothing is imported if one is invalid"))

const catalog = Command.make("catalog").pipe(
  Command.withDescription("The technical catalog (codia, sheets)"),
  Command.withSubcommands([catalogImport])
)

const registry = Command.make("registry").pipe(
  Command.withDescription("Production registry data"),
  Command.withSubcommands([registryImport])
)

// plates ---------------------------------------------------------------------------------------

const platesHash = Command.make("hash", { plate: Argument.String("PLATE"), json }, Effect.fnUntraced(function*({ json, plate }) {
  const normalized = normalizePlate(plate)
  if (normalized === undefined) return yield* new UsageError({ message: `"${plate}" is not a plate (AAA999 or AA999AA)` })
  const { plateHashSalt } = yield* resolveTemporalSecrets("hashes")
  const hash = plateHash(plateHashSalt, normalized)
  yield* print(json, { plateHash: hash }, hash)
})).pipe(Command.withDescription("The plate's hash (PLATE_HASH_SALT), as Temporal workflow ids and the VdaPlateHash search attribute show it"))

const plates = Command.make("plates").pipe(
  Command.withDescription("Plates as operators' tools see them"),
  Command.withSubcommands([platesHash])
)

// temporal -------------------------------------------------------------------------------------

const temporalSecrets = Command.make("secrets", {}, Effect.fnUntraced(function*() {
  const values = generateSecrets(new Date())
  yield* Console.log(SECRET_SETTINGS.map((name) => `${name}=${values[name]}`).join("\n"))
})).pipe(Command.withDescription(
    `New Temporal secrets as environment lines (${SECRET_SETTINGS.join(", ")}), for an .env file or a secret store; the API and the worker need the same values, kept stable once used`
  ))

const codecEndpoint = Command.make("codec-endpoint", {}, Effect.fnUntraced(function*() {
  const { host, port } = (yield* AppConfig).temporal.codecServer
  const token = Option.map((yield* TemporalSecrets).codecServerToken, Redacted.value)
  if (Option.isNone(token)) return yield* new UsageError({ message: "TEMPORAL_PAYLOADS=clear: there is no codec endpoint" })
  yield* Console.log(`http://${host === "0.0.0.0" ? "localhost" : host}:${port}/${token.value}`)
})).pipe(
    Command.withDescription(
      "The worker's codec endpoint with its token, as the Temporal UI calls it (TEMPORAL_CODEC_ENDPOINT, or `temporal server start-dev --ui-codec-endpoint`)"
    ),
    Command.provide(temporalSecretsLayer("worker"))
  )

const temporal = Command.make("temporal").pipe(
  Command.withDescription("What the Temporal engine needs"),
  Command.withSubcommands([temporalSecrets, codecEndpoint])
)

/** Services the commands use, on the configured database. Built only when such a command runs. */
export const CliServicesLive = Layer.mergeAll(Accounts.layer, ConsoleSessions.layer, OpeningBalance.layer, Catalog.layer, VehicleStore.layer, ModuleRegistry.layer).pipe(
  Layer.provideMerge(DatabaseLive("cli")),
  Layer.provideMerge(AppConfig.layer)
)

export const vda = Command.make("vda").pipe(
  Command.withDescription("Vehicle Data API administration"),
  Command.withSubcommands([
    accounts.pipe(Command.provide(CliServicesLive)),
    keys.pipe(Command.provide(CliServicesLive)),
    consoleCommand.pipe(Command.provide(CliServicesLive)),
    catalog.pipe(Command.provide(CliServicesLive)),
    registry.pipe(Command.provide(CliServicesLive)),
    plates,
    temporal
  ]),
  Command.provide(AppConfig.layer)
)

/**
 * A parse or validation failure is told on stderr alone, one line per problem, without the help
 * (`--help` shows it): stdout stays empty, as `--json` callers expect. Help asked for, or shown
 * because no subcommand was named, goes to stdout as usual.
 */
const ErrorsOnStderr = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Effect.flatMap(Effect.service(CliOutput.Formatter), (formatter) =>
        Console.error(event.errors.map((error) => formatter.formatCliError(error)).join("\n")))
      : CliOutput.defaultPresenter.present(event)
})

/** Runs `vda` on the arguments after the program's name (`process.argv.slice(2)`). */
export const runCli = (args: ReadonlyArray<string>) =>
  Command.runWith(vda, { version: "0.1.0" })(args).pipe(Effect.provide(ErrorsOnStderr))
