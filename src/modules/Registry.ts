/**
 * Module records of the production registry. The registry is authoritative for the plates it
 * holds: a plate without records of a module has none (`total: 0`).
 */
import { Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { ModuleName } from "../../workflows/shared.js"
import { finesData, gncData, type RegistryModuleRecord, taxDebtData, vtvData } from "./Records.js"

const MODULE_OF: Record<RegistryModuleRecord["kind"], ModuleName> = {
  fine: "fines",
  vtv: "vtv",
  tax_debt: "tax_debt",
  gnc: "gnc"
}

/** The records of one plate and module, newest first where a date orders them. */
const dataOf = (module: ModuleName, items: ReadonlyArray<any>): unknown => {
  switch (module) {
    case "fines":
      return finesData(items)
    case "vtv":
      return vtvData(items)
    case "tax_debt":
      return taxDebtData(items)
    case "gnc":
      return gncData(items)
  }
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return {
    data: (plate: string, module: ModuleName) =>
      sql<{ readonly item: unknown }>`
        select item from module_records where plate = ${plate} and module = ${module} order by id`.pipe(
        Effect.map((rows) => dataOf(module, rows.map((r) => r.item))),
        Effect.orDie
      ),

    /**
     * Replaces, for every plate and module present in `records`, the records held: an import
     * is the current picture of what it covers. Runs inside the caller's transaction.
     */
    replace: (records: ReadonlyArray<RegistryModuleRecord>, at: Date) =>
      Effect.gen(function*() {
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
      }).pipe(Effect.orDie)
  }
})

export class ModuleRegistry extends Context.Service<ModuleRegistry, Effect.Success<typeof make>>()("vda/ModuleRegistry", { make }) {
  static readonly layer = Layer.effect(ModuleRegistry, make)
}
