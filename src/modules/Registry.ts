/**
 * Module records of the production registry. The registry is authoritative for the plates it
 * holds: a plate without records of a module has none (`total: 0`).
 */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { ModuleName } from "../../workflows/shared.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import {
  FineItem,
  finesData,
  GncItem,
  gncData,
  type RegistryModuleRecord,
  TaxDebtItem,
  taxDebtData,
  VtvItem,
  vtvData
} from "./Records.js"

const MODULE_OF: Record<RegistryModuleRecord["kind"], ModuleName> = {
  fine: "fines",
  vtv: "vtv",
  tax_debt: "tax_debt",
  gnc: "gnc"
}

/** A module's records as stored: each the item its import line gave (without kind and plate). */
const recordsOf = <Item extends SqlRows.RowSchema>(module: ModuleName, Item: Item) =>
  SqlRows.findAll(`${module} records`, Schema.Struct({ item: Item }))

const fines = recordsOf("fines", FineItem)
const vtv = recordsOf("vtv", VtvItem)
const taxDebt = recordsOf("tax_debt", TaxDebtItem)
const gnc = recordsOf("gnc", GncItem)

const itemsOf = <A>(rows: ReadonlyArray<{ readonly item: A }>) => rows.map((row) => row.item)

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return {
    /** The records of one plate and module, newest first where a date orders them. */
    data: (plate: string, module: ModuleName): Effect.Effect<unknown> => {
      const rows = sql`select item from module_records where plate = ${plate} and module = ${module} order by id`
      switch (module) {
        case "fines":
          return fines(rows).pipe(Effect.map((found) => finesData(itemsOf(found))), Effect.orDie)
        case "vtv":
          return vtv(rows).pipe(Effect.map((found) => vtvData(itemsOf(found))), Effect.orDie)
        case "tax_debt":
          return taxDebt(rows).pipe(Effect.map((found) => taxDebtData(itemsOf(found))), Effect.orDie)
        case "gnc":
          return gnc(rows).pipe(Effect.map((found) => gncData(itemsOf(found))), Effect.orDie)
      }
    },

    /**
     * Replaces, for every plate and module present in `records`, the records held: an import
     * is the current picture of what it covers. Runs inside the caller's transaction.
     */
    replace: Effect.fnUntraced(function*(records: ReadonlyArray<RegistryModuleRecord>, at: Date) {
      if (records.length === 0) return 0
      const rows = records.map(({ kind, plate, ...item }) => ({
        plate,
        module: MODULE_OF[kind],
        item: JSON.stringify(item),
        importedAt: at
      }))
      const covered = [...new Set(rows.map((r) => `${r.plate}\u0000${r.module}`))].map((k) => k.split("\u0000"))
      yield* sql`
        delete from module_records m
        using unnest(${covered.map(([p]) => p!)}::text[], ${covered.map(([, m]) => m!)}::text[]) as c(plate, module)
        where m.plate = c.plate and m.module = c.module`
      for (const chunk of Arr.chunksOf(rows, 500)) {
        yield* sql`insert into module_records ${sql.insert(chunk)}`
      }
      return rows.length
    }, Effect.orDie)
  }
})

export class ModuleRegistry extends Context.Service<ModuleRegistry, Effect.Success<typeof make>>()("vda/ModuleRegistry", { make }) {
  static readonly layer = Layer.effect(ModuleRegistry, make)
}
