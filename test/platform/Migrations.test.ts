/**
 * Released migrations are frozen: a database records a migration once and never runs it again, so
 * an edit to one would part the databases migrated before it from the ones migrated after. Each
 * file is pinned here by its SHA-256; a change to the schema is a new migration, pinned when it
 * is added. Functions are no migration's business: they are installed from their sources (see
 * DatabaseFunctions.test.ts), so no migration creates one or imports another's text.
 */
import { createHash } from "node:crypto"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { migrations } from "../../src/platform/db/Database.js"
import { readSource, sourceFiles } from "../support/SourceFiles.js"

const DIR = "src/platform/db/migrations"

/** Every released migration and the SHA-256 of its file. */
const RELEASED: ReadonlyArray<readonly [file: string, sha256: string]> = [
  ["0001_foundation.ts", "df5c26708e9c646ed7c15d777c644963387109220b4782cc6943734acd8a1d3f"],
  ["0002_vehicles_catalog.ts", "854288f764385d291441ba5a1ca92958c942c1941291e33e4fa4b9c9f4e6b767"],
  ["0003_metering_functions.ts", "1f7e149c5583b4a0350d73faaf780022c2e611f0f914179773f490408615fe04"],
  ["0004_operations.ts", "6da3b364b5eca06c164115108641a1feaa18107eb6b5bc093352067da77719b3"],
  ["0005_webhooks.ts", "c939a3d08d7cb49d13d9dfbf044b441e33fbab8a09f49d7b62e9d11c9eb486e6"],
  ["0006_leases.ts", "b48df4bf5e0906e0e3100def02477612bd49114a3abfd38c796a4d5714645eaa"],
  ["0007_claims.ts", "93c9000bf255f95be36d7b914a8647021aaee4d803c8c000d914b611d95b4e5b"],
  ["0008_api_versions.ts", "53b02fd14c1c391dcb7c027eda498835f49c8c37e2e9aa716a056768c67dff7a"],
  ["0009_deliveries_when_disabled.ts", "02bc952a81a80cec90c87c0baa8ec0e922823eab4f8566fba14b5d240586a241"],
  ["0010_reports.ts", "534c14d4e898b60beeecd484f116358de544b8748d590a4f1af72264a1486a0c"],
  ["0011_admit_and_consume.ts", "ab78b2f1490586fc5719675f32d61b33393601d296ecdef1879fd31294299b37"],
  ["0012_delivery_trace_parent.ts", "1fcb384a71ed6b9b70b3269ee49d9b076366c24bdae041da7b0dc837edb0c620"],
  ["0013_delivery_series.ts", "7a769bf39cb0a3fb8c7ba22184a67815b2bcf08c673be09789a9badb0e176bfd"],
  ["0014_console.ts", "f8810bf2415c65fd7245b0ae985228a553a8a513fa4e7a8372ff184ed9b2bdb2"],
  ["0015_admission_by_counter.ts", "57b16e5ca33c55b2123c40ab3559563e27d32e6e7ac62bb73e1dfe5e9e7eee19"],
  ["0016_operation_reads.ts", "7a9df1fc6cdc45ae02358e495bd6f7c2cb2aca0434bb05677413e5fe17fa14ca"],
  ["0017_admission_by_batch_totals.ts", "d77616d4d2d0118548f9819e89b45533c7fd16e010db8bf6b8afb2077cf5947d"],
  ["0018_account_status_read.ts", "a48625e7eeaeea7e42bf3fae93e2cf5b661998dc9f9e4cf98f71346d7d729019"],
  ["0019_database_functions.ts", "a2de7a6679426024e02452e1d58e04522d11a3b5824883c01cc6febef0fd6db8"],
  ["0020_admission_without_subtransactions.ts", "061061152c90850db49f3c4c4bf7c40dc7f26b0687b7b5b3eebe141375cbe591"]
]

const files = sourceFiles(DIR).map((file) => Path.posix.basename(file)).sort()
const sha256Of = (file: string) => createHash("sha256").update(readSource(`${DIR}/${file}`)).digest("hex")

describe("the migrations", () => {
  it("are the files of their folder, each one run by the migrator", () => {
    expect(files).toEqual(RELEASED.map(([file]) => file))
    expect(Object.keys(migrations)).toEqual(files.map((file) => file.replace(/\.ts$/, "")))
  })

  it("are unchanged since their release", () => {
    expect(files.map((file) => [file, sha256Of(file)])).toEqual(RELEASED)
  })

  it("create no function and import no other migration", () => {
    for (const file of files) {
      const text = readSource(`${DIR}/${file}`)
      expect(text, file).not.toMatch(/create\s+(or\s+replace\s+)?function/i)
      expect(text, file).not.toMatch(/from\s+["']\.\//)
    }
  })
})
