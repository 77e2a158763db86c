/**
 * Operations as the people who run the service watch them: how many finish, by kind and final
 * status, and how long they took from creation to their final status. Counted once per
 * operation, where it becomes final (`OperationsRepo.finalize`), whichever engine or process
 * ran it; the reconciler's findings are counted where it acts on them.
 */
import { Metric } from "effect"
import { durationBuckets, labelSets, updateUnsafe } from "../platform/observability/Telemetry.js"

const finished = Metric.counter("vda_operations_finished", {
  description: "Operations that reached a final status, by kind and status",
  incremental: true
})

const durations = Metric.histogram("vda_operation_duration_seconds", {
  boundaries: Metric.boundariesFromIterable([...durationBuckets, 60, 300, 900]),
  description: "Time from an operation's creation to its final status, by kind and status"
})

const kindAndStatus = labelSets("kind", "status")

export const countFinished = (kind: string, status: string, createdAt: Date, at: Date) => {
  const labels = kindAndStatus(kind, status)
  updateUnsafe(finished, 1, labels)
  updateUnsafe(durations, Math.max(0, at.getTime() - createdAt.getTime()) / 1000, labels)
}

const findings = Metric.counter("vda_reconciler_findings", {
  description: "What the reconciler found and did: started (never started), restarted, finalized_lost (workflow gone), resumed (inline sweep)",
  incremental: true
})
const findingLabels = labelSets("finding")

export const countFinding = (finding: "started" | "restarted" | "finalized_lost" | "resumed", count = 1) => {
  if (count > 0) updateUnsafe(findings, count, findingLabels(finding))
}
