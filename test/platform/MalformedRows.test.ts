/**
 * Rows altered behind the application's back (by raw SQL, to values the database accepts and the
 * row schemas do not): each repository fails typed where it reads them, and the API answers the
 * contract's 500 `internal_error` with nothing internal in it, logging the statement and the field
 * but never a value.
 */
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { vi } from "vitest"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { MalformedRow } from "../../src/platform/db/SqlRows.js"
import { VehicleStore } from "../../src/vehicles/Store.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import { INTERNAL_DETAIL } from "../support/ErrorShape.js"
import { InProcessApp, inProcessAppLayer } from "../support/InProcessApp.js"
import { eventually } from "../support/Processes.js"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { withKey } from "../support/TestApp.js"

/** Recognisable values planted in the malformed rows: none may show in an answer or a log line. */
const PLATE = "QX123ZZ"
const PLANTED = /QX123ZZ|planted-value|vda_live_|radar/

/** A new account on the plan whose row the last test alters; its production key. */
const scaleAccount = Effect.flatMap(InProcessApp, (app) => Effect.promise(() => app.createAccount({ plan: "scale" })))

/** A request to the production listener, in-process. */
const production = (path: string, key: string) => Effect.flatMap(InProcessApp, (app) => Effect.promise(() => app.production(path, withKey(key))))

/** The defect a repository call died with (repositories die on what the database should never give). */
const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) ? Effect.succeed(Cause.squash(exit.cause)) : Effect.die(new Error("expected the call to fail")))

/** What the application logs while `during` runs, as the log sink and the console receive it; spied on until the test ends. */
const logged = <A, E, R>(during: Effect.Effect<A, E, R>, until: RegExp) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const keep = (chunk: unknown) => void lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString())
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const write = process.stdout.write.bind(process.stdout)
        vi.spyOn(process.stdout, "write").mockImplementation((chunk: unknown, ...rest: Array<unknown>) => {
          keep(chunk)
          return (write as (...args: Array<unknown>) => boolean)(chunk, ...rest)
        })
        for (const method of ["log", "info", "warn", "error"] as const) {
          vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => void lines.push(args.map(String).join(" ")))
        }
      }),
      () => Effect.sync(() => vi.restoreAllMocks())
    )
    yield* during
    return yield* eventually(Effect.sync(() => (until.test(lines.join("\n")) ? lines.join("\n") : undefined)), `a log line matching ${until}`, 5_000)
  })

/** The answer is the contract's 500, with nothing internal and none of the planted values. */
const expectInternalError = (res: Response) =>
  Effect.gen(function*() {
    expect(res.status).toBe(500)
    const text = yield* Effect.promise(() => res.text())
    expect(text).not.toMatch(INTERNAL_DETAIL)
    expect(text).not.toMatch(PLANTED)
    expect(text).not.toMatch(/MalformedRow|schema|Expected/)
    const body = JSON.parse(text)
    expectShape(body, ErrorResponse("internal_error"))
    expect(body.error.retryable).toBe(false)
  })

// the application does real I/O on the real clock: no test services
layer(inProcessAppLayer(), { excludeTestServices: true })("a malformed row", (it) => {
  it.effect("an operation: the repository fails typed, a poll is 500 internal_error, the log names the statement only", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const account = yield* scaleAccount
      const id = "op_malformed_input"
      yield* sql`insert into operations (id, account_id, environment, kind, api_version, plate, modules_key, status, input, created_at, updated_at)
        values (${id}, ${account.id}, 'production', 'modules', 'v2', ${PLATE}, 'fines', 'completed',
          ${JSON.stringify({ kind: "modules", modules: ["planted-value"] })}, now(), now())`

      const defect = yield* defectOf(Effect.flatMap(OperationsRepo, (repo) => repo.find(id)))
      expect(defect).toBeInstanceOf(MalformedRow)
      expect((defect as MalformedRow).statement).toBe("operation")
      expect((defect as MalformedRow).issues).toMatch(/^input/)

      const output = yield* logged(
        Effect.flatMap(production(`/v2/operations/${id}`, account.production.key), expectInternalError),
        /operations with their modules/
      )
      expect(output).toMatch(/MalformedRow: A row of "operations with their modules" does not match its schema: 0\.input/)
      expect(output).not.toMatch(PLANTED)
    }))

  it.effect("a stored vehicle: the vehicle query is 500 internal_error", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const account = yield* scaleAccount
      yield* sql`insert into vehicles (plate, source, found, facts, fetched_at)
        values (${PLATE}, 'registry', true, ${JSON.stringify({ year: "planted-value" })}, now())`

      const defect = yield* defectOf(Effect.flatMap(VehicleStore, (store) => store.find(PLATE)))
      expect(defect).toBeInstanceOf(MalformedRow)
      expect((defect as MalformedRow).statement).toBe("vehicles by plate")

      yield* Effect.flatMap(production(`/v2/vehicles/${PLATE}`, account.production.key), expectInternalError)
    }))

  it.effect("one malformed row in a batch of reads fails only the requests that read it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const account = yield* scaleAccount
      // plates ending alike share a lane of the store's lookups, and ids ending alike one of the
      // polls: the good ones are asked first, the malformed one last, so that it shares a batch with them
      const plates = ["QA100AA", "QA200AA", "QA300AA", "QA400AA"]
      const malformedPlate = "QX999AA"
      const ids = ["op_good_11", "op_good_21", "op_good_31"]
      const malformedId = "op_bad_input_1"
      for (const plate of plates) {
        yield* sql`insert into vehicles (plate, source, found, facts, fetched_at) values (${plate}, 'registry', false, null, now())`
      }
      yield* sql`insert into vehicles (plate, source, found, facts, fetched_at)
        values (${malformedPlate}, 'registry', true, ${JSON.stringify({ year: "planted-value" })}, now())`
      for (const id of [...ids, malformedId]) {
        const input = id === malformedId ? { kind: "modules", modules: ["planted-value"] } : { kind: "modules", modules: ["fines"] }
        yield* sql`insert into operations (id, account_id, environment, kind, api_version, plate, modules_key, status, input, created_at, updated_at)
          values (${id}, ${account.id}, 'production', 'modules', 'v2', 'QA100AA', ${id}, 'completed', ${JSON.stringify(input)}, now(), now())`
      }

      const store = yield* VehicleStore
      const lookups = yield* Effect.all([...plates, malformedPlate].map((plate) => Effect.exit(store.find(plate))), { concurrency: "unbounded" })
      expect(lookups.slice(0, plates.length).every(Exit.isSuccess)).toBe(true)
      expect(Exit.isFailure(lookups[plates.length]!)).toBe(true)

      const polls = yield* Effect.all([...ids, malformedId].map((id) => production(`/v2/operations/${id}`, account.production.key)), {
        concurrency: "unbounded"
      })
      expect(polls.slice(0, ids.length).map((res) => res.status)).toEqual(ids.map(() => 200))
      yield* expectInternalError(polls[ids.length]!)
    }))

  it.effect("a webhook delivery: the deliveries list is 500 internal_error", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const account = yield* scaleAccount
      yield* sql`insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, attempts,
          next_attempt_at, created_at, updated_at)
        values (gen_random_uuid(), ${account.id}, 'production', 'v2', 'operation.completed', ${`{"plate":"${PLATE}"}`},
          'processed', -1, now(), now(), now())`

      const defect = yield* defectOf(Effect.flatMap(WebhooksRepo, (repo) => repo.list(account.id, "production", 25, 0)))
      expect(defect).toBeInstanceOf(MalformedRow)
      expect((defect as MalformedRow).issues).toMatch(/^0\.attempts/)

      yield* Effect.flatMap(production("/v2/webhooks/deliveries", account.production.key), expectInternalError)
    }))

  it.effect("an account's plan (read by the admission of every request): 500 internal_error for its keys", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const account = yield* scaleAccount
      yield* sql`update plans set enabled_modules = '{fines,radar}' where id = 'scale'`

      const defect = yield* defectOf(Effect.flatMap(AccountsRepo, (repo) => repo.findAccount(account.id)))
      expect(defect).toBeInstanceOf(MalformedRow)
      expect((defect as MalformedRow).issues).toMatch(/^enabledModules\.1/)

      yield* Effect.flatMap(production("/v2/status", account.production.key), expectInternalError)
      yield* Effect.flatMap(production(`/v2/vehicles/${PLATE}`, account.production.key), expectInternalError)
    }))
})
