/**
 * Inline engines sharing one database: each runs only what it claimed. An operation claimed by a
 * live process elsewhere (its presence session open) is left alone; as soon as that process is
 * gone (its session closed, as on kill -9), this one takes it over and finishes it.
 */
import { Effect } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { PRESENCE_PREFIX } from "../../src/platform/Presence.js"
import { waitFor } from "../support/Processes.js"
import { makeTestApp, type TestApp } from "../support/TestApp.js"

let app: TestApp
let db: Pg.Client

beforeAll(async () => {
  app = await makeTestApp({ config: { INLINE_CLAIM_TTL_MS: "600" } })
  db = new Pg.Client({ connectionString: app.databaseUrl })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await app?.dispose()
})

const insert = (accountId: string, id: string) =>
  app.run(Effect.flatMap(OperationsRepo, (repo) =>
    repo.insert({
      id,
      accountId,
      environment: "sandbox",
      kind: "modules",
      apiVersion: "v2",
      plate: `AB${id.slice(-3)}CD`,
      modulesKey: "fines",
      input: { kind: "modules", modules: ["fines"] },
      createdAt: new Date()
    })))

/** Another process's presence: a session named after it. */
const presenceOf = async (holder: string) => {
  const client = new Pg.Client({ connectionString: app.databaseUrl, application_name: `${PRESENCE_PREFIX}${holder}` })
  await client.connect()
  return client
}

const row = async (id: string) =>
  (await db.query("select status, claimed_by from operations where id = $1", [id])).rows[0] as { status: string; claimed_by: string | null }

describe("claims", () => {
  it("work claimed by another live process is left alone, and taken over as soon as that process is gone", async () => {
    const account = await app.createAccount()
    const other = await presenceOf("another-process")
    await insert(account.id, "op_claims_foreign_101")
    await db.query("update operations set claimed_by = 'another-process', claimed_until = now() + interval '1 hour' where id = $1", [
      "op_claims_foreign_101"
    ])
    await insert(account.id, "op_claims_free_102")

    // the sweep that finished the free operation saw the claimed one too, and left it
    await waitFor(async () => ((await row("op_claims_free_102")).status === "completed" ? true : undefined), "the free operation")
    expect(await row("op_claims_foreign_101")).toEqual({ status: "queued", claimed_by: "another-process" })

    await other.end() // the other process dies: its claim is open at once, an hour before it would lapse
    const taken = await waitFor(async () => {
      const current = await row("op_claims_foreign_101")
      return current.status === "completed" ? current : undefined
    }, "the lapsed operation to be taken over")
    expect(taken.claimed_by).not.toBe("another-process")
    expect(taken.claimed_by).toBe((await row("op_claims_free_102")).claimed_by)
  })

  it("a claim is exclusive while it lives; its holder may renew it", async () => {
    const account = await app.createAccount()
    const holderA = await presenceOf("holder-a")
    await insert(account.id, "op_claims_exclusive_103")
    await db.query("update operations set claimed_by = 'holder-a', claimed_until = now() + interval '1 hour' where id = $1", [
      "op_claims_exclusive_103"
    ])
    const claim = (holder: string) => app.run(Effect.flatMap(OperationsRepo, (repo) => repo.claim("op_claims_exclusive_103", holder, 60_000)))
    expect(await claim("holder-b")).toBe(false)
    expect(await claim("holder-a")).toBe(true) // its holder renews it
    expect(await claim("holder-b")).toBe(false)
    await holderA.end()
  })
})
