/**
 * A process's presence in PostgreSQL: a connection of its own, named after it, open for as long
 * as the process lives. PostgreSQL ends the session as soon as the process dies (even on
 * `kill -9`), so `pg_stat_activity` tells at once whether a holder of claims is still alive.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Option, Redacted } from "effect"
import Pg from "pg"

export const PRESENCE_PREFIX = "vda-presence-"

/** Opens the presence session of `holder` for the current scope. */
export const presence = Effect.fnUntraced(function*(holder: string) {
  const pg = yield* PgClient.PgClient
  const url = Option.getOrUndefined(Option.fromNullishOr(pg.config.url))
  yield* Effect.acquireRelease(
    Effect.tryPromise(async () => {
      const client = new Pg.Client({
        connectionString: url === undefined ? undefined : Redacted.value(url),
        application_name: `${PRESENCE_PREFIX}${holder}`
      })
      client.on("error", () => {}) // a lost session only makes this process's claims look lapsed
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end()).pipe(Effect.timeoutOption(1_000))
  )
})
