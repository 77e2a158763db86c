/**
 * Operations as the people who run the service watch them: how many finish, by kind and final
 * status, and how long they took from creation to their final status. Counted once per
 * operation, where it becomes final (`OperationsRepo.finalize`), whichever engine or process
 * ran it; the reconciler's findings are counted where it acts on them.
 */
import { Metric, MetricBoundaries } from "effect"
import { durationBuckets, labelled } from "../platform/Telemetry.js"

const finished = labelled(Metric.counter("vda_operations_finished", {
  description: "Operations that reached a final status, by kind and status",
  incremental: true
}))

const durations = labelled(Metric.histogram(
  "vda_operation_duration_seconds",
  MetricBoundaries.fromIterable([...durationBuckets, 60, 300, 900]),
  "Time from an operation's creation to its final status, by kind and status"
))

export const countFinished = (kind: string, status: string, createdAt: Date, at: Date) => {
  finished(1, ["kind", kind], ["status", status])
  durations(Math.max(0, at.getTime() - createdAt.getTime()) / 1000, ["kind", kind], ["status", status])
}

const findings = labelled(Metric.counter("vda_reconciler_findings", {
  description: "What the reconciler found and did: started (never started), restarted, finalized_lost (workflow gone), resumed (inline sweep)",
  incremental: true
}))

export const countFinding = (finding: "started" | "restarted" | "finalized_lost" | "resumed", count = 1) => {
  if (count > 0) findings(count, ["finding", finding])
}
