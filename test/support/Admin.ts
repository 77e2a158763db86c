/**
 * Plain `pg` helpers for test set-up (usable from vitest's global setup, which cannot import vitest).
 */
import pg from "pg"

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
