/**
 * Plain `pg` helpers for test set-up (usable from vitest's global setup, which cannot import vitest).
 */
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { MigratorLive } from "../../src/DatabaseLive.js"
import { pgClientLayer } from "../../src/platform/db/Database.js"

export const TEMPLATE_DATABASE = "vda_template"

export const adminQuery = async (url: string, text: string, values: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text, [...values])
  } finally {
    await client.end()
  }
}

/** Applies the service's migrations to the database at `url`. */
export const migrate = (url: string) =>
  Effect.runPromise(Effect.scoped(Layer.build(
    MigratorLive.pipe(Layer.provide(pgClientLayer(Redacted.make(url), 2)))
  )))
