/**
 * Inline engines sharing one database: each runs only what it claimed. An operation claimed by a
 * live process elsewhere (its presence session open) is left alone; as soon as that process is
 * gone (its session closed, as on kill -9), this one takes it over and finishes it.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ActivitiesLive } from "../../src/ActivitiesLive.js"
import { InlineEngineLive } from "../../src/operations/InlineEngine.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { presence } from "../../src/platform/db/Presence.js"
import { insertOperation } from "../support/Operations.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { eventually } from "../support/Processes.js"
import { testConfig } from "../support/TestApp.js"

const Services = Layer.mergeAll(InlineEngineLive, Accounts.layer).pipe(
  Layer.provideMerge(ActivitiesLive),
  Layer.provideMerge(freshDatabaseLayer(4)),
  Layer.provideMerge(testConfig({ INLINE_CLAIM_TTL_MS: "600" }))
)

const newAccountId = Effect.flatMap(Accounts, (accounts) =>
  accounts.create({ owner: "Test owner", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })).pipe(
    Effect.map((account) => account.id)
  )

const insert = (accountId: string, id: string) =>
  insertOperation({
    id,
    accountId,
    environment: "sandbox",
    kind: "modules",
    apiVersion: "v2",
    plate: `AB${id.slice(-3)}CD`,
    modulesKey: "fines",
    input: { kind: "modules", modules: ["fines"] },
    createdAt: new Date()
  })

/** An operation claimed by `holder` from the start: the engine's sweep never sees it unclaimed. */
const insertClaimed = (accountId: string, id: string, holder: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.andThen(
      insert(accountId, id),
      sql`update operations set claimed_by = ${holder}, claimed_until = now() + interval '1 hour' where id = ${id}`
    )))

/** Another process's presence, as that process holds it, until `gone` is closed. */
const presenceOf = (holder: string) =>
  Effect.gen(function*() {
    const gone = yield* Scope.make()
    yield* presence(holder).pipe(Scope.provide(gone), Effect.orDie)
    return { end: Scope.close(gone, Exit.void) }
  })

const row = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ status: string; claimedBy: string | null; startedAt: Date | null }>`
    select status, claimed_by, started_at from operations where id = ${id}`).pipe(Effect.map((rows) => rows[0]!))

layer(Services, { excludeTestServices: true })("claims", (it) => {
  it.effect("work claimed by another live process is left alone, and taken over as soon as that process is gone", () =>
    Effect.gen(function*() {
      const accountId = yield* newAccountId
      const other = yield* presenceOf("another-process")
      yield* insertClaimed(accountId, "op_claims_foreign_101", "another-process")
      yield* insert(accountId, "op_claims_free_102")

      // the sweep that finished the free operation saw the claimed one too, and left it
      yield* eventually(Effect.map(row("op_claims_free_102"), (r) => (r.status === "completed" ? true : undefined)), "the free operation")
      expect(yield* row("op_claims_foreign_101")).toEqual({ status: "queued", claimedBy: "another-process", startedAt: null })

      yield* other.end // the other process dies: its claim is open at once, an hour before it would lapse
      const taken = yield* eventually(
        Effect.map(row("op_claims_foreign_101"), (current) => (current.status === "completed" ? current : undefined)),
        "the lapsed operation to be taken over"
      )
      expect(taken.claimedBy).not.toBe("another-process")
      expect(taken.claimedBy).toBe((yield* row("op_claims_free_102")).claimedBy)
    }))

  it.effect("a claim is exclusive while it lives; its holder may renew it", () =>
    Effect.gen(function*() {
      const accountId = yield* newAccountId
      const holderA = yield* presenceOf("holder-a")
      yield* insertClaimed(accountId, "op_claims_exclusive_103", "holder-a")
      const startedAt = new Date("2026-11-27T12:00:00.000Z")
      const claim = (holder: string, at = startedAt) =>
        Effect.flatMap(OperationsRepo, (repo) => repo.claim("op_claims_exclusive_103", holder, 60_000, at))
      expect(yield* claim("holder-b")).toBe(false)
      expect((yield* row("op_claims_exclusive_103")).startedAt).toBeNull() // a refused claim starts nothing
      expect(yield* claim("holder-a")).toBe(true) // its holder renews it
      expect((yield* row("op_claims_exclusive_103")).startedAt).toEqual(startedAt) // and the claim started it
      expect(yield* claim("holder-a", new Date("2026-11-27T12:05:00.000Z"))).toBe(true)
      expect((yield* row("op_claims_exclusive_103")).startedAt).toEqual(startedAt) // once
      expect(yield* claim("holder-b")).toBe(false)
      yield* holderA.end
    }))
})
