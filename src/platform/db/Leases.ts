/**
 * Leases in PostgreSQL: a named job runs in one process at a time. A holder keeps its lease by
 * renewing it before it expires; once it stops renewing (it died), another process takes over.
 */
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** This process, as a lease holder. */
  const holder = randomUUID()

  return {
    holder,
    /** Takes or renews the lease for `ttlMs`; true while this process holds it. */
    acquire: (name: string, ttlMs: number) =>
      sql`
        insert into leases (name, holder, expires_at) values (${name}, ${holder}, now() + ${ttlMs} * interval '1 millisecond')
        on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
        where leases.holder = excluded.holder or leases.expires_at < now()
        returning holder`.pipe(Effect.map((rows) => rows.length > 0)),

    /** Gives the lease up (at shutdown), so another process takes over at once. */
    release: (name: string) => sql`delete from leases where name = ${name} and holder = ${holder}`.pipe(Effect.asVoid)
  }
})

export class Leases extends Context.Service<Leases, Effect.Success<typeof make>>()("vda/Leases", { make }) {
  static readonly layer = Layer.effect(Leases, make)
}
