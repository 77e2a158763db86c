/**
 * Test databases: each test file gets its own, cloned from the migrated template.
 */
import { inject } from "vitest"
import { Effect, Layer, Redacted } from "effect"
import { pgClientLayer } from "../../src/platform/db/Database.js"
import { adminQuery, TEMPLATE_DATABASE } from "./Admin.js"

export { adminQuery }

let counter = 0

/** A new database cloned from the migrated template; returns its URL. */
export const freshDatabase = async (): Promise<string> => {
  const { baseUrl } = inject("postgres")
  const name = `vda_test_${process.pid}_${Date.now().toString(36)}_${counter++}`
  await adminQuery(`${baseUrl}postgres`, `create database ${name} template ${TEMPLATE_DATABASE}`)
  return `${baseUrl}${name}`
}

/** SqlClient on a fresh database. */
export const freshDatabaseLayer = (maxConnections = 10) =>
  Layer.unwrap(
    Effect.promise(freshDatabase).pipe(Effect.map((url) => pgClientLayer(Redacted.make(url), maxConnections)))
  )
