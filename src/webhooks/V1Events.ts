/**
 * v1's event payloads (DESIGN §11): the same signature and headers as v2 (`x-service-event:
 * v1.<event>`), a flat body with the event id and name beside the resource's fields.
 */
import { completedAtOf } from "../../workflows/shared.js"
import type { Operation } from "../operations/Api.js"
import type { V1Report } from "../reports/Api.js"
import { sampleReport } from "../reports/Sample.js"
import { ulidAt } from "../platform/Ids.js"

export type V1EventType = "modules.completed" | "modules.failed" | "report.completed" | "report.failed"

/** An operation as encoded for the wire (dates as strings). */
type EncodedOperation = { readonly status: string; readonly updatedAt: string } & Record<string, unknown>

export const v1ModulesEventType = (operation: Pick<Operation, "status">): V1EventType =>
  operation.status === "failed" ? "modules.failed" : "modules.completed"

/** `modules.completed` / `modules.failed` for a v1 module operation. */
export const v1ModulesEvent = (eventId: string, event: V1EventType, operation: EncodedOperation) => ({
  eventId,
  event,
  id: operation.id,
  status: operation.status,
  plate: operation.plate,
  modules: operation.modules,
  createdAt: operation.createdAt,
  updatedAt: operation.updatedAt,
  completedAt: completedAtOf(operation)
})

/** `report.completed` / `report.failed`: the V1Report as polled, with the event's id and name. */
export const v1ReportEvent = (eventId: string, event: V1EventType, report: typeof V1Report.Encoded) => ({
  eventId,
  event,
  id: report.id,
  status: report.status,
  plate: report.plate,
  report: report.report,
  createdAt: report.createdAt,
  updatedAt: report.updatedAt,
  completedAt: report.completedAt
})

/** v1's test event: a realistic `report.completed` for a sample plate. */
export const v1ReportTestEvent = (eventId: string, at: Date) => {
  const { vehicle, ...report } = sampleReport(at)
  const when = at.toISOString()
  return {
    eventId,
    event: "report.completed" as const,
    id: `rep_${ulidAt(at.getTime())}`,
    status: "completed" as const,
    plate: vehicle.plate,
    report: { vehicle, ...report },
    createdAt: when,
    updatedAt: when,
    completedAt: when
  }
}
