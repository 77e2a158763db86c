/**
 * An operation's modules are answered in the contract's order (fines, vtv, tax_debt, gnc),
 * whichever landed last: PostgreSQL returns rows in no set order, and a row written anew moves.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { MODULES } from "../../workflows/shared.js"
import { Accounts } from "../../src/accounts/Accounts.js"
import { Metering } from "../../src/metering/Metering.js"
import { OperationsRepo } from "../../src/operations/Repo.js"
import { insertOperation, modulesOperation } from "../support/Operations.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const Services = Layer.mergeAll(Accounts.layer, Metering.layer, OperationsRepo.layer).pipe(Layer.provideMerge(freshDatabaseLayer(2)))

layer(Services, { excludeTestServices: true })("an operation's modules", (it) => {
  it.effect("come in the contract's order from every read, stored in another", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* OperationsRepo
      const account = yield* Effect.flatMap(Accounts, (accounts) =>
        accounts.create({ owner: "Order", plan: "growth", timezone: "America/Argentina/Buenos_Aires" }))
      const id = "op_module_order_1"
      yield* insertOperation(modulesOperation(id, account.id, MODULES))
      // the module rows written again, in the reverse order: as stored, they no longer read in the contract's
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`create temporary table saved on commit drop as select * from operation_modules where operation_id = ${id}`
        yield* sql`delete from operation_modules where operation_id = ${id}`
        for (const module of [...MODULES].reverse()) {
          yield* sql`insert into operation_modules select * from saved where module = ${module}`
        }
      }))
      const [stored] = yield* sql<{ physical: Array<string> }>`
        select array_agg(module) as physical from (select module from operation_modules where operation_id = ${id} offset 0) m`
      expect(stored!.physical).not.toEqual([...MODULES])

      expect((yield* repo.modules(id)).map((m) => m.module)).toEqual([...MODULES])
      const [polled] = yield* repo.findManyWithModules([id])
      expect(polled!.modules.map((m) => m.module)).toEqual([...MODULES])
      const each = yield* repo.findEachWithModules([id])
      const one = each.get(id)!
      expect(one._tag === "Success" && one.success.modules.map((m) => m.module)).toEqual([...MODULES])
    }))
})
