/**
 * Changes announced between processes through PostgreSQL: a writer announces what it changed on a
 * channel (`NOTIFY`, delivered when its transaction commits), and every process that keeps a copy
 * of it in memory hears it (`LISTEN`, on one pooled connection held while its scope lasts).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Queue, Schedule } from "effect"
import { SqlClient } from "effect/sql"

/** Listening again after the connection was lost: soon, then every ten seconds at most. */
const LISTEN_AGAIN = Schedule.min([Schedule.exponential("200 millis"), Schedule.spaced("10 seconds")])

export interface Hearing {
  /** A change announced on the channel, by its payload. */
  readonly heard: (payload: string) => void
  /**
   * Listening started (true) or stopped (false). What was announced while not listening is not
   * known: a copy kept in memory is to be forgotten at both.
   */
  readonly listening: (listening: boolean) => void
}

/**
 * Hears `channel` until interrupted: listened again whenever the connection is lost. The caller
 * forks it where its copy is used, so a process that only writes holds no listening connection.
 */
export const hear = (channel: string, hearing: Hearing) =>
  Effect.flatMap(PgClient.PgClient, (pg) => {
    const listen = Effect.scoped(Effect.gen(function*() {
      const changes = yield* pg.listen(channel)
      hearing.listening(true)
      return yield* Effect.forever(Effect.map(Queue.take(changes), (change) => hearing.heard(change.payload)))
    })).pipe(Effect.ensuring(Effect.sync(() => hearing.listening(false))))
    return Effect.retry(listen, LISTEN_AGAIN)
  })

/** The call that announces `payload` on `channel`, to go in a statement of the write it announces. */
export const announcement = (sql: SqlClient.SqlClient, channel: string, payload: string) => sql`pg_notify(${channel}, ${payload})`

/** Announces `payload` on `channel`, to every process hearing it, when `sql`'s current transaction commits. */
export const announce = (sql: SqlClient.SqlClient, channel: string, payload: string) =>
  sql`select ${announcement(sql, channel, payload)}`
