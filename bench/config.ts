/**
 * The bench's settings, from the environment, read once. Everything the method fixes (1,000
 * accounts, 10,000 plates, the seed) is a constant here, so that two runs are comparable.
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const RESULTS_DIR = Path.join(ROOT, "bench", "results")

const positive = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return value
}

const accountsVia = () => {
  const raw = process.env.BENCH_ACCOUNTS_VIA ?? "clone"
  if (raw !== "clone" && raw !== "vda") throw new Error(`BENCH_ACCOUNTS_VIA is clone or vda, not "${raw}"`)
  return raw
}

export const settings = {
  durationS: positive("BENCH_DURATION_S", 8),
  rounds: Math.round(positive("BENCH_ROUNDS", 3)),
  connections: Math.round(positive("BENCH_CONNECTIONS", 50)),
  warmupS: positive("BENCH_WARMUP_S", 3),
  baseline: process.env.BENCH_BASELINE || undefined,
  peersDir: Path.resolve(ROOT, process.env.BENCH_PEERS_DIR || "../shared/bench-peers"),
  /** `clone`: one account made by `vda`, the rest copied from it in SQL; `vda`: every one by `vda`. */
  accountsVia: accountsVia(),
  manyAccounts: 1_000,
  manyPlates: 10_000,
  seed: 20_261_127,
  onePlate: "AB123CD",
  sandboxModuleLatencyMs: 5,
  burst: { limit: 1_000, requests: 1_500 },
  moduleQuery: { modules: ["fines", "vtv"] }
} as const
