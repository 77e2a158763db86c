/**
 * The database runs exactly the functions of their sources. On a database migrated as every
 * process migrates it, each function PostgreSQL holds has one source and each source one function,
 * and each definition as PostgreSQL gives it back (`pg_get_functiondef`) is the one its source
 * makes: the source is run again in a transaction that is rolled back, and nothing may change.
 *
 * The installer: a changed source is installed again and the others are left alone, and a
 * database migrated before the functions left the migrations (functions there, none recorded)
 * ends with the sources' functions.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect, Redacted } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { databaseFunctions } from "../../src/DatabaseLive.js"
import { pgClientLayer } from "../../src/platform/Database.js"
import { type DatabaseFunction, databaseFunction, installFunctions } from "../../src/platform/DatabaseFunctions.js"
import { freshDatabase } from "../support/Postgres.js"
import { REPOSITORY_ROOT } from "../support/SourceFiles.js"

interface Definition {
  readonly name: string
  readonly definition: string
}

const DEFINITIONS = `
  select p.proname as name, pg_get_functiondef(p.oid) as definition
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname = 'public'
  order by 1, 2`

const connect = async () => {
  const url = await freshDatabase()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return { url, client }
}

const definitionsIn = async (client: pg.Client) => (await client.query<Definition>(DEFINITIONS)).rows

/** The definitions after `source` runs, in a transaction rolled back after. */
const definitionsAfter = async (client: pg.Client, source: string) => {
  await client.query("begin")
  try {
    await client.query(source)
    return await definitionsIn(client)
  } finally {
    await client.query("rollback")
  }
}

/** The same function with a comment more in its body: another source of it. */
const changed = (fn: DatabaseFunction) => databaseFunction(fn.source.replace(/ as \$fn\$\n/, " as $fn$\n-- changed\n"))

const install = (url: string, functions: ReadonlyArray<DatabaseFunction>) =>
  Effect.runPromise(installFunctions(functions).pipe(Effect.provide(pgClientLayer(Redacted.make(url), 1))))

const recorded = async (client: pg.Client) =>
  (await client.query<{ name: string; sha256: string; installedAt: Date }>(
    `select name, sha256, installed_at as "installedAt" from database_functions order by name`
  )).rows

const sourceNames = databaseFunctions.map((fn) => fn.name).sort()

/** The functions' source files, each named after its function, in the `sql` folders of the features. */
const sourceFileNames = () =>
  Fs.readdirSync(Path.join(REPOSITORY_ROOT, "src"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && Fs.existsSync(Path.join(REPOSITORY_ROOT, "src", entry.name, "sql")))
    .flatMap((entry) => Fs.readdirSync(Path.join(REPOSITORY_ROOT, "src", entry.name, "sql")))
    .flatMap((file) => /^(vda_\w+)\.(sql|ts)$/.exec(file)?.[1] ?? [])
    .sort()

describe("the database's functions", () => {
  let client: pg.Client
  let installed: ReadonlyArray<Definition>
  beforeAll(async () => {
    client = (await connect()).client
    installed = await definitionsIn(client)
  })
  afterAll(() => client.end())

  it("are one per source, and none other", () => {
    expect(installed.map((row) => row.name)).toEqual(sourceNames)
  })

  it("have every source file of the features' sql folders installed", () => {
    expect(sourceFileNames()).toEqual(sourceNames)
  })

  it.each(databaseFunctions.map((fn) => [fn.name, fn] as const))("%s is as its source defines it", async (_, fn) => {
    expect(await definitionsAfter(client, fn.source)).toEqual(installed)
  })

  it("would differ from a source that is not theirs", async () => {
    for (const fn of databaseFunctions) {
      const after = await definitionsAfter(client, changed(fn).source)
      expect(after.find((row) => row.name === fn.name)?.definition).toContain("-- changed")
      expect(after).not.toEqual(installed)
    }
  })

  it("are recorded with the SHA-256 of their sources", async () => {
    expect((await recorded(client)).map(({ name, sha256 }) => ({ name, sha256 }))).toEqual(
      databaseFunctions.map(({ name, sha256 }) => ({ name, sha256 })).sort((a, b) => a.name.localeCompare(b.name))
    )
  })
})

describe("installing the functions", () => {
  let url: string
  let client: pg.Client
  let fresh: ReadonlyArray<Definition>
  beforeAll(async () => {
    ;({ url, client } = await connect())
    fresh = await definitionsIn(client)
  })
  afterAll(() => client.end())

  it("installs again the sources that changed, and only those", async () => {
    const before = await recorded(client)
    const [first, ...others] = databaseFunctions
    await install(url, [changed(first!), ...others])
    const after = await recorded(client)
    expect(after.filter((row, i) => row.installedAt.getTime() !== before[i]!.installedAt.getTime()).map((row) => row.name))
      .toEqual([first!.name])
    expect((await definitionsIn(client)).find((row) => row.name === first!.name)?.definition).toContain("-- changed")

    await install(url, databaseFunctions)
    expect(await definitionsIn(client)).toEqual(fresh)
  })

  it("brings a database migrated by the old chain (its functions there, none recorded) to the sources' functions", async () => {
    await client.query("delete from database_functions")
    for (const fn of databaseFunctions) await client.query(changed(fn).source)
    await install(url, databaseFunctions)
    expect(await definitionsIn(client)).toEqual(fresh)
    expect((await recorded(client)).map((row) => row.name)).toEqual(sourceNames)
  })
})
