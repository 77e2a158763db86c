/**
 * v1's event payloads (DESIGN §11): the same signature and headers as v2 (`x-service-event:
 * v1.<event>`), a flat body with the event id and name beside the resource's fields.
 */
import { Layer, Schema } from "effect"
import { completedAtOf } from "../../workflows/shared.js"
import { Operation } from "../operations/Api.js"
import { toOperation } from "../operations/Operations.js"
import { ulidAt } from "../platform/ids/Ids.js"
import { V1Report } from "../reports/Api.js"
import { toV1Report } from "../reports/Report.js"
import { sampleReport } from "../reports/Sample.js"
import { V1EventBodies, type V1EventType } from "../webhooks/V1EventBodies.js"

/** A modules operation as encoded for the wire (dates as strings). */
type EncodedOperation = {
  readonly id: string
  readonly status: string
  readonly plate: string
  readonly modules: unknown
  readonly createdAt: string
  readonly updatedAt: string
}

export const v1ModulesEventType = (operation: Pick<Operation, "status">): V1EventType =>
  operation.status === "failed" ? "modules.failed" : "modules.completed"

/** A v2 modules operation in v1's shape: as polled (decoded) or as sent in an event (encoded) alike. */
export const v1ModulesFields = <
  O extends {
    readonly id: unknown
    readonly status: string
    readonly plate: unknown
    readonly modules: unknown
    readonly createdAt: unknown
    readonly updatedAt: unknown
  }
>(operation: O): {
  readonly id: O["id"]
  readonly status: O["status"]
  readonly plate: O["plate"]
  readonly modules: O["modules"]
  readonly createdAt: O["createdAt"]
  readonly updatedAt: O["updatedAt"]
  readonly completedAt: O["updatedAt"] | null
} => ({
  id: operation.id,
  status: operation.status,
  plate: operation.plate,
  modules: operation.modules,
  createdAt: operation.createdAt,
  updatedAt: operation.updatedAt,
  completedAt: completedAtOf<O["updatedAt"]>(operation)
})

/** `modules.completed` / `modules.failed` for a v1 module operation. */
export const v1ModulesEvent = (eventId: string, event: V1EventType, operation: EncodedOperation) => ({
  eventId,
  event,
  ...v1ModulesFields(operation)
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

const encodeOperation = Schema.encodeSync(Operation)
const encodeReport = Schema.encodeSync(V1Report)

/** v1's event bodies, for the webhook deliveries. */
export const V1EventBodiesLive = Layer.succeed(
  V1EventBodies,
  V1EventBodies.of({
    ofOperation: (row, modules) => {
      if (row.kind === "report") {
        const report = encodeReport(toV1Report(row, modules))
        const type = report.status === "failed" ? "report.failed" : "report.completed"
        return { type, body: (eventId) => v1ReportEvent(eventId, type, report) }
      }
      const operation = toOperation(row, modules)
      const encoded = encodeOperation(operation)
      const type = v1ModulesEventType(operation)
      return { type, body: (eventId) => v1ModulesEvent(eventId, type, encoded as Extract<typeof encoded, { kind: "modules" }>) }
    },
    test: v1ReportTestEvent
  })
)
