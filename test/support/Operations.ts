/**
 * An operation row put in place for a test, as the service creates it (one statement, see
 * `vda_create_operation`) but charged nothing: no engine runs it until the test starts one.
 */
import { Effect } from "effect"
import { Metering } from "../../src/metering/Metering.js"
import { type NewOperation, OperationsRepo } from "../../src/operations/Repo.js"
import type { ModuleName } from "../../workflows/shared.js"

export const insertOperation = (row: NewOperation) =>
  Effect.gen(function*() {
    const repo = yield* OperationsRepo
    const metering = yield* Metering
    const created = yield* repo.create(row, null, metering.chargedWithin([]).arguments)
    if ("activeId" in created) return yield* Effect.die(new Error(`operation ${row.id} met an active twin`))
  })

/** A v2 sandbox modules operation of `accountId` for `modules`, created now, as `insertOperation` takes it. */
export const modulesOperation = (id: string, accountId: string, modules: ReadonlyArray<ModuleName>, plate = "AB123CD"): NewOperation => ({
  id,
  accountId,
  environment: "sandbox",
  kind: "modules",
  apiVersion: "v2",
  plate,
  modulesKey: modules.join(","),
  input: { kind: "modules", modules: [...modules] },
  createdAt: new Date()
})
