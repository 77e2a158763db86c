/**
 * What the rows need in each target's database, made the supported way: the service's accounts and
 * keys by `vda` (see `manyServiceAccounts` for the 1,000), its registry by `vda registry import`,
 * its operation and report over HTTP; the peers' accounts by their own `seedAccount`, their plates
 * by INSERT into their `vehicles` table.
 */
import { randomBytes, createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { settings } from "./config.js"
import { mapLimit } from "./processes.js"
import type { Peer, PeerCommon, Service } from "./targets.js"

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const MAKES = [
  ["FORD", "RANGER 2.2 TDCI XL 4X2"], ["TOYOTA", "ETIOS 1.5 XS 5P"], ["VOLKSWAGEN", "GOL TREND 1.6 TRENDLINE"],
  ["FIAT", "CRONOS 1.3 DRIVE"], ["RENAULT", "KANGOO 1.6 AUTHENTIQUE"], ["CHEVROLET", "ONIX 1.4 LT"]
] as const
const PLACES = [["Río Gallegos", "Santa Cruz"], ["La Rioja", "La Rioja"], ["Mar del Plata", "Buenos Aires"], ["Rosario", "Santa Fe"], ["Córdoba", "Córdoba"]] as const

/** A vehicle as the registry file has it (src/vehicles/Records.ts), without its `kind`. */
export interface Vehicle {
  readonly plate: string
  readonly make: string
  readonly model: string
  readonly year: number
  readonly firstRegistered: string
  readonly totalOwners: number
  readonly currentOwners: number
  readonly currentLocation: { readonly city: string; readonly province: string }
  readonly locations: ReadonlyArray<string>
  readonly sourceDate: string
  readonly modelImage: null
}

/** AB123CD as the peers seed it (common.mjs `vehicleSeed`), in the registry's fields. */
export const ONE_VEHICLE: Vehicle = {
  plate: settings.onePlate, make: "FORD", model: "RANGER 2.2 TDCI XL 4X2", year: 2017, firstRegistered: "2017-06-16",
  totalOwners: 1, currentOwners: 1, currentLocation: { city: "Río Gallegos", province: "Santa Cruz" },
  locations: ["Río Gallegos, Santa Cruz"], sourceDate: "2026-10-12", modelImage: null
}

/** The many-plates row's vehicles: `count` distinct plates (BV000AA…), the same for every target. */
export const manyVehicles = (count: number): Array<Vehicle> =>
  Array.from({ length: count }, (_, i) => {
    const plate = `BV${String(i % 1000).padStart(3, "0")}${LETTERS[Math.floor(i / 1000) % 26]}${LETTERS[Math.floor(i / 26_000) % 26]}`
    const [make, model] = MAKES[i % MAKES.length]!
    const [city, province] = PLACES[i % PLACES.length]!
    const year = 2005 + (i % 20)
    return {
      plate, make, model, year, firstRegistered: `${year}-0${1 + (i % 9)}-1${i % 10}`, totalOwners: 1 + (i % 3), currentOwners: 1,
      currentLocation: { city, province }, locations: [`${city}, ${province}`], sourceDate: "2026-10-01", modelImage: null
    }
  })

// service -------------------------------------------------------------------------------------

export const importRegistry = async (service: Service, scratch: string, vehicles: ReadonlyArray<Vehicle>) => {
  const file = Path.join(scratch, "registry.jsonl")
  await Fs.writeFile(file, vehicles.map((v) => JSON.stringify({ kind: "vehicle", ...v })).join("\n") + "\n")
  const said = await service.vda("registry", "import", file)
  await Fs.rm(file, { force: true })
  return said.trim()
}

export interface ServiceAccount {
  readonly id: string
  readonly production: string
  readonly sandbox?: string
}

const UNLIMITED = ["--plate-queries", "unlimited", "--module-queries", "unlimited", "--unique-plates", "unlimited", "--rpm", "unlimited"]

const createAccount = async (service: Service, owner: string, terms: ReadonlyArray<string>) => {
  const { id } = JSON.parse(await service.vda("accounts", "create", "--owner", owner, "--plan", "custom", "--json")) as { id: string }
  await service.vda("accounts", "set-custom", id, ...terms)
  return id
}

const createKey = async (service: Service, accountId: string, environment: "production" | "sandbox") =>
  (JSON.parse(await service.vda("keys", "create", "--account", accountId, "--environment", environment, "--json")) as { key: string }).key

/** The busy account of the one-account rows: custom plan, everything unlimited, a key per environment. */
export const busyServiceAccount = async (service: Service): Promise<ServiceAccount> => {
  const id = await createAccount(service, "bench busy", UNLIMITED)
  return { id, production: await createKey(service, id, "production"), sandbox: await createKey(service, id, "sandbox") }
}

/** The burst's account: 1,000 plate queries a month, nothing else limited. */
export const limitedServiceAccount = async (service: Service): Promise<ServiceAccount> => {
  const terms = UNLIMITED.map((arg, i) => (UNLIMITED[i - 1] === "--plate-queries" ? String(settings.burst.limit) : arg))
  const id = await createAccount(service, "bench limit", terms)
  return { id, production: await createKey(service, id, "production") }
}

const VDA_CONCURRENCY = 8

/**
 * The many-accounts row's accounts, each with a production key. `vda` makes one account a second
 * (three commands of about 1 s of CPU each on this machine: 25 minutes for 1,000 on two cores), so
 * by default (BENCH_ACCOUNTS_VIA=clone) `vda` makes the first and the rest are copies of its rows
 * in SQL: each table's row of the template as JSON with only the id, owner, key and timestamps
 * replaced, so whatever columns a migration adds are copied too; keys made as `vda keys create`
 * makes them (vda_live_ + 32 base62, SHA-256 hex stored). The copy refuses to run if the template
 * left rows in a table it does not copy, and every key is checked over HTTP afterwards.
 * BENCH_ACCOUNTS_VIA=vda makes every account with `vda`, eight at a time.
 */
export const manyServiceAccounts = async (service: Service, count: number): Promise<Array<ServiceAccount>> => {
  if (settings.accountsVia === "vda") {
    return mapLimit(Array.from({ length: count }, (_, i) => i), VDA_CONCURRENCY, async (i) => {
      const id = await createAccount(service, `bench many ${i}`, UNLIMITED)
      return { id, production: await createKey(service, id, "production") }
    })
  }
  const templateId = await createAccount(service, "bench many 0", UNLIMITED)
  const template = { id: templateId, production: await createKey(service, templateId, "production") }
  const copies = Array.from({ length: count - 1 }, (_, i) => ({ id: `acct_${ulid()}`, owner: `bench many ${i + 1}`, keyId: `key_${ulid()}`, key: liveKey() }))
  const client = new pg.Client({ connectionString: service.database.url })
  await client.connect()
  try {
    const { rows } = await client.query<{ table_name: string; n: number }>(
      `SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
       WHERE c.table_schema = current_schema() AND c.column_name = 'account_id' AND t.table_type = 'BASE TABLE'`)
    for (const { table_name: table } of rows) {
      if (table === "custom_plans" || table === "api_keys") continue
      const { rows: [found] } = await client.query(`SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(table)} WHERE account_id = $1`, [templateId])
      if (found.n > 0) throw new Error(`vda accounts create left rows in ${table}, which the bench's copy does not know: run with BENCH_ACCOUNTS_VIA=vda`)
    }
    await client.query("BEGIN")
    await client.query(
      `INSERT INTO accounts SELECT (jsonb_populate_record(NULL::accounts, to_jsonb(a) || jsonb_build_object('id', n.id, 'owner', n.owner, 'created_at', now()))).*
       FROM accounts a, unnest($2::text[], $3::text[]) AS n(id, owner) WHERE a.id = $1`,
      [templateId, copies.map((c) => c.id), copies.map((c) => c.owner)])
    await client.query(
      `INSERT INTO custom_plans SELECT (jsonb_populate_record(NULL::custom_plans, to_jsonb(p) || jsonb_build_object('account_id', n.id))).*
       FROM custom_plans p, unnest($2::text[]) AS n(id) WHERE p.account_id = $1`,
      [templateId, copies.map((c) => c.id)])
    await client.query(
      `INSERT INTO api_keys SELECT (jsonb_populate_record(NULL::api_keys, to_jsonb(k) || jsonb_build_object(
         'id', n.key_id, 'account_id', n.id, 'key_hash', n.hash, 'prefix', n.prefix, 'last4', n.last4, 'created_at', now(), 'last_used_at', NULL))).*
       FROM api_keys k, unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS n(id, key_id, hash, prefix, last4) WHERE k.account_id = $1`,
      [templateId, copies.map((c) => c.id), copies.map((c) => c.keyId), copies.map((c) => sha256Hex(c.key)),
        copies.map((c) => c.key.slice(0, 13)), copies.map((c) => c.key.slice(-4))])
    await client.query("COMMIT")
  } finally {
    await client.end()
  }
  return [template, ...copies.map((c) => ({ id: c.id, production: c.key }))]
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

const ulid = () => {
  let time = ""
  for (let rest = Date.now(), i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = CROCKFORD[rest % 32] + time
  return time + [...randomBytes(16)].map((b) => CROCKFORD[b % 32]).join("")
}

const liveKey = () => {
  let secret = ""
  while (secret.length < 32) for (const b of randomBytes(48)) if (b < 248 && secret.length < 32) secret += BASE62[b % 62]
  return `vda_live_${secret}`
}

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex")

interface Usage {
  readonly entitlements: Record<string, unknown>
  readonly plateQueries: { readonly used: number; readonly limit: number | null }
}

export const usageOf = async (url: string, key: string): Promise<Usage> => {
  const response = await fetch(`${url}/v2/usage`, { headers: { "x-api-key": key } })
  if (response.status !== 200) throw new Error(`GET /v2/usage answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { data: Usage }).data
}

/** Every key answers, on an unlimited custom plan, with nothing consumed yet. */
export const checkUnlimitedKeys = async (url: string, keys: ReadonlyArray<string>) => {
  await mapLimit(keys, VDA_CONCURRENCY, async (key, i) => {
    const usage = await usageOf(url, key)
    const e = usage.entitlements
    if (e.plan !== "custom" || e.plateQueriesMonthly !== null || e.moduleQueriesMonthly !== null || e.uniquePlatesDaily !== null ||
      e.requestsPerMinute !== null || usage.plateQueries.used !== 0) {
      throw new Error(`account ${i}'s key does not show an unused, unlimited custom plan: ${JSON.stringify(usage)}`)
    }
  })
}

const postJson = async (url: string, key: string, body: unknown) => {
  const response = await fetch(url, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
  const text = await response.text()
  if (response.status !== 202) throw new Error(`POST ${url} answered ${response.status}: ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

const untilFinal = async (url: string, key: string, isFinal: (body: Record<string, unknown>) => boolean) => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const body = (await (await fetch(url, { headers: { "x-api-key": key } })).json()) as Record<string, unknown>
    if (isFinal(body)) return body
    if (Date.now() > deadline) throw new Error(`${url} was not final after 60 s: ${JSON.stringify(body)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const FINAL = new Set(["completed", "partial", "failed"])

/** A final module operation of the busy account (sandbox), for the poll row: its path. */
export const finalOperation = async (service: Service, key: string) => {
  const created = await postJson(`${service.sandboxUrl}/v2/vehicles/${settings.onePlate}/modules`, key, settings.moduleQuery)
  const path = `/v2/operations/${String(created.id)}`
  await untilFinal(`${service.sandboxUrl}${path}`, key, (body) => FINAL.has(String(body.status)))
  return path
}

/** A final v1 report of the busy account (sandbox), for the v1 report poll row: its path. */
export const finalReport = async (service: Service, key: string) => {
  const created = await postJson(`${service.sandboxUrl}/v1/reports`, key, { plate: settings.onePlate })
  const path = `/v1/reports/${String((created.data as { id: string }).id)}`
  await untilFinal(`${service.sandboxUrl}${path}`, key, (body) => (body.data as { report: unknown } | undefined)?.report != null)
  return path
}

// peers ---------------------------------------------------------------------------------------

/**
 * The rows' vehicles in the peer's `vehicles` table, as the service's registry has them (so every
 * target gives the same answer: AB123CD's seed row loses the sandbox's three extra fields), and
 * the many accounts (unlimited) and the burst's account by the peer's own `seedAccount`.
 */
export const seedPeer = async (peer: Peer, common: PeerCommon, vehicles: ReadonlyArray<Vehicle>, accounts: number) => {
  const client = new pg.Client({ connectionString: peer.database.url })
  await client.connect()
  try {
    await client.query(`INSERT INTO vehicles (plate, data) SELECT * FROM unnest($1::text[], $2::json[]) ON CONFLICT (plate) DO UPDATE SET data = EXCLUDED.data`,
      [vehicles.map((v) => v.plate), vehicles.map((v) => JSON.stringify(v))])
    const many: Array<{ accountId: number; key: string }> = []
    for (let i = 0; i < accounts; i++) many.push(await common.seedAccount(client))
    const limited = await common.seedAccount(client, { plateLimit: settings.burst.limit })
    return { many, limited }
  } finally {
    await client.end()
  }
}
