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
import { expect, layer } from "@effect/vitest"
import { Data, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { databaseFunctions } from "../../src/DatabaseLive.js"
import { type DatabaseFunction, databaseFunction, installFunctions } from "../../src/platform/db/DatabaseFunctions.js"
import dropAdmitChargeOrBusy from "../../src/platform/db/migrations/0020_admission_without_subtransactions.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
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

const run = (text: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))

const definitionsIn = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Definition>(DEFINITIONS))

/** Carries what a transaction saw out of it, failing it so that it is rolled back. */
class RolledBack extends Data.TaggedError("RolledBack")<{ readonly definitions: ReadonlyArray<Definition> }> {}

/** The definitions after `source` runs, in a transaction rolled back after. */
const definitionsAfter = (source: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.andThen(
      sql.unsafe(source),
      Effect.flatMap(definitionsIn, (definitions) => Effect.fail(new RolledBack({ definitions })))
    ))).pipe(Effect.catchTag("RolledBack", (rolledBack) => Effect.succeed(rolledBack.definitions)))

/** The same function with a comment more in its body: another source of it. */
const changed = (fn: DatabaseFunction) => databaseFunction(fn.source.replace(/ as \$fn\$\n/, " as $fn$\n-- changed\n"))

const recorded = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe<{ name: string; sha256: string; installedAt: Date }>(
    `select name, sha256, installed_at as "installedAt" from database_functions order by name`
  ))

const sourceNames = databaseFunctions.map((fn) => fn.name).sort()

/** The functions' source files, each named after its function, in the `sql` folders of the features. */
const sourceFileNames = () =>
  Fs.readdirSync(Path.join(REPOSITORY_ROOT, "src"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && Fs.existsSync(Path.join(REPOSITORY_ROOT, "src", entry.name, "sql")))
    .flatMap((entry) => Fs.readdirSync(Path.join(REPOSITORY_ROOT, "src", entry.name, "sql")))
    .flatMap((file) => /^(vda_\w+)\.(sql|ts)$/.exec(file)?.[1] ?? [])
    .sort()

// nothing here changes this database: each source runs in a transaction rolled back
layer(freshDatabaseLayer(1), { excludeTestServices: true })("the database's functions", (it) => {
  it.effect("are one per source, and none other", () =>
    Effect.gen(function*() {
      expect((yield* definitionsIn).map((row) => row.name)).toEqual(sourceNames)
    }))

  it("have every source file of the features' sql folders installed", () => {
    expect(sourceFileNames()).toEqual(sourceNames)
  })

  it.effect.each(databaseFunctions.map((fn) => [fn.name, fn] as const))("%s is as its source defines it", ([, fn]) =>
    Effect.gen(function*() {
      const installed = yield* definitionsIn
      expect(yield* definitionsAfter(fn.source)).toEqual(installed)
    }))

  it.effect("would differ from a source that is not theirs", () =>
    Effect.gen(function*() {
      const installed = yield* definitionsIn
      for (const fn of databaseFunctions) {
        const after = yield* definitionsAfter(changed(fn).source)
        expect(after.find((row) => row.name === fn.name)?.definition).toContain("-- changed")
        expect(after).not.toEqual(installed)
      }
      // and each was rolled back
      expect(yield* definitionsIn).toEqual(installed)
    }))

  it.effect("are recorded with the SHA-256 of their sources", () =>
    Effect.gen(function*() {
      expect((yield* recorded).map(({ name, sha256 }) => ({ name, sha256 }))).toEqual(
        databaseFunctions.map(({ name, sha256 }) => ({ name, sha256 })).sort((a, b) => a.name.localeCompare(b.name))
      )
    }))
})

layer(freshDatabaseLayer(1), { excludeTestServices: true })("installing the functions", (it) => {
  it.effect("installs again the sources that changed, and only those", () =>
    Effect.gen(function*() {
      const fresh = yield* definitionsIn
      const before = yield* recorded
      const [first, ...others] = databaseFunctions
      yield* installFunctions([changed(first!), ...others])
      const after = yield* recorded
      expect(after.filter((row, i) => row.installedAt.getTime() !== before[i]!.installedAt.getTime()).map((row) => row.name))
        .toEqual([first!.name])
      expect((yield* definitionsIn).find((row) => row.name === first!.name)?.definition).toContain("-- changed")

      yield* installFunctions(databaseFunctions)
      expect(yield* definitionsIn).toEqual(fresh)
    }))

  it.effect("brings a database migrated by the old chain (its functions there, none recorded) to the sources' functions", () =>
    Effect.gen(function*() {
      const fresh = yield* definitionsIn
      yield* run("delete from database_functions")
      for (const fn of databaseFunctions) yield* run(changed(fn).source)
      yield* installFunctions(databaseFunctions)
      expect(yield* definitionsIn).toEqual(fresh)
      expect((yield* recorded).map((row) => row.name)).toEqual(sourceNames)
    }))

  it.effect("lose a function that has no source any more to the migration that retires it", () =>
    Effect.gen(function*() {
      const fresh = yield* definitionsIn
      yield* run("create function vda_admit_charge_or_busy(p_hash text) returns jsonb language sql as $$ select null::jsonb $$")
      yield* run("insert into database_functions (name, sha256) values ('vda_admit_charge_or_busy', 'retired')")
      yield* dropAdmitChargeOrBusy
      expect(yield* definitionsIn).toEqual(fresh)
      expect((yield* recorded).map((row) => row.name)).toEqual(sourceNames)
    }))
})
