/**
 * What is checked after the rounds: the service's allocation per vehicle query, the burst at a
 * limit on every target, and every target's plate queries consumed against its 200 answers.
 */
import { settings } from "./config.js"
import { usageOf } from "./fixtures.js"
import type { BurstCheck, MeteringCheck } from "./goals.js"
import { type Run, runWhenIdle } from "./measure.js"
import { mapLimit } from "./processes.js"
import { withoutHistogram } from "./results.js"
import type { VehicleRow } from "./rows.js"
import type { Answers, Prepared } from "./setup.js"
import type { Target } from "./targets.js"

const IDLE_ALLOCATION_MS = 2_000

export interface AllocationResult {
  readonly bytes: number
  readonly collections: number
  readonly responses: number
  readonly bytesPerQuery: number
  /** What the service allocates with no request at all, measured just before: for scale (the goal counts everything). */
  readonly idleBytesPerSecond: number
  readonly run: Omit<Run, "histogram">
}

/** One more run of each service vehicle row with the allocation counter on; not counted in the rates. */
export const measureAllocation = async (root: string, prepared: Prepared, answers: Answers, seed: number) => {
  const { service } = prepared
  const targets = prepared.targets
  const allocation: Partial<Record<VehicleRow, AllocationResult>> = {}
  for (const kind of ["one", "many"] as const) {
    const row = prepared.rows.find((r) => r.target === service && r.vehicle === kind)!
    let idle = { bytes: 0, collections: 0 }
    const { run } = await runWhenIdle(root, targets, row.spec(seed), { durationS: settings.durationS }, async () => {
      await service.allocations.start()
      await new Promise((resolve) => setTimeout(resolve, IDLE_ALLOCATION_MS))
      idle = await service.allocations.stop()
      await service.allocations.start()
    })
    const counted = await service.allocations.stop()
    answers.count(service, kind, run)
    allocation[kind] = {
      ...counted,
      responses: run.responses,
      bytesPerQuery: counted.bytes / Math.max(1, run.responses),
      idleBytesPerSecond: (idle.bytes * 1000) / IDLE_ALLOCATION_MS,
      run: withoutHistogram(run)
    }
  }
  return allocation
}

export type BurstResult = BurstCheck & { readonly errorCodes: Record<string, number> }

/** An account limited to 1,000 plate queries gets 1,500 requests at once, on every target. */
export const runBursts = async (root: string, prepared: Prepared) => {
  const targets = prepared.targets
  const burst = async (target: Target, url: string, key: string, consumed: () => Promise<number>): Promise<BurstResult> => {
    const spec = { url, request: { method: "GET" as const, path: `/v2/vehicles/${settings.onePlate}`, headers: { "x-api-key": key } }, countErrorCodes: true }
    const { run } = await runWhenIdle(root, targets, spec, { amount: settings.burst.requests })
    const ok = run.statuses["200"] ?? 0
    const quotaExceeded = run.errorCodes?.["429 quota_exceeded"] ?? 0
    return { target: target.name, ok, quotaExceeded, other: run.responses - ok - quotaExceeded, errors: run.errors, consumed: await consumed(), errorCodes: run.errorCodes ?? {} }
  }
  const { service, limited } = prepared
  const results = [await burst(service, service.productionUrl, limited.production, async () => (await usageOf(service.productionUrl, limited.production)).plateQueries.used)]
  for (const { peer, common, limited: account } of prepared.peers) {
    results.push(await burst(peer, peer.url, account.key, () => common.plateUsed(peer.database.url, account.accountId)))
  }
  return results
}

const READ_CONCURRENCY = 8
const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

/** Plate queries consumed by the accounts of the vehicle rows, per target, against the 200 answers it gave. */
export const readMetering = async (prepared: Prepared, answers: Answers): Promise<Array<MeteringCheck>> => {
  const { service, busy, many } = prepared
  const usedOf = async (key: string) => (await usageOf(service.productionUrl, key)).plateQueries.used
  const checks: Array<MeteringCheck> = [{
    target: "service",
    answered200: answers.ok200.get("service")!,
    consumed: { one: await usedOf(busy.production), many: sum(await mapLimit(many, READ_CONCURRENCY, (a) => usedOf(a.production))) }
  }]
  for (const { peer, common, many: accounts } of prepared.peers) {
    checks.push({
      target: peer.name,
      answered200: answers.ok200.get(peer.name)!,
      consumed: {
        one: await common.plateUsed(peer.database.url, peer.boot.accountId),
        many: sum(await mapLimit(accounts, READ_CONCURRENCY, (a) => common.plateUsed(peer.database.url, a.accountId)))
      }
    })
  }
  return checks
}
