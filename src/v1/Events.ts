/**
 * v1's event payloads (DESIGN §11): the same signature and headers as v2 (`x-service-event:
 * v1.<event>`), a flat body with the event id and name beside the resource's fields, encoded by
 * their schemas (`V1Event`).
 */
import { Layer, Schema } from "effect"
import { completedAtOf } from "../../workflows/shared.js"
import type { ModulesOperation, Operation } from "../operations/Api.js"
import { toOperation } from "../operations/Operations.js"
import { ulidAt } from "../platform/ids/Ids.js"
import type { V1Report } from "../reports/Api.js"
import { toV1Report } from "../reports/Report.js"
import { sampleReport } from "../reports/Sample.js"
import { V1EventBodies } from "../webhooks/V1EventBodies.js"
import { V1Event, type V1ModulesEvent, type V1ModulesOperation } from "./Api.js"

export const v1ModulesEventType = (operation: Pick<Operation, "status">): (typeof V1ModulesEvent.Type)["event"] =>
  operation.status === "failed" ? "modules.failed" : "modules.completed"

/** A v2 modules operation in v1's shape. */
export const v1ModulesFields = (operation: ModulesOperation): V1ModulesOperation => ({
  id: operation.id,
  status: operation.status,
  plate: operation.plate,
  modules: operation.modules,
  createdAt: operation.createdAt,
  updatedAt: operation.updatedAt,
  completedAt: completedAtOf(operation)
})

const encodeEvent = Schema.encodeSync(V1Event)

/** v1's test event: a realistic `report.completed` for a sample plate. */
export const v1ReportTestEvent = (eventId: string, at: Date) => {
  const { vehicle, ...report } = sampleReport(at)
  return encodeEvent({
    eventId,
    event: "report.completed",
    id: `rep_${ulidAt(at.getTime())}`,
    status: "completed",
    plate: vehicle.plate,
    report: { vehicle, ...report } as V1Report["report"],
    createdAt: at,
    updatedAt: at,
    completedAt: at
  })
}

/** v1's event bodies, for the webhook deliveries. */
export const V1EventBodiesLive = Layer.succeed(
  V1EventBodies,
  V1EventBodies.of({
    ofOperation: (row, modules) => {
      if (row.kind === "report") {
        const report = toV1Report(row, modules)
        const event = report.status === "failed" ? "report.failed" : "report.completed"
        return { type: event, body: (eventId) => encodeEvent({ eventId, event, ...report }) }
      }
      const operation = toOperation(row, modules) as ModulesOperation
      const event = v1ModulesEventType(operation)
      return { type: event, body: (eventId) => encodeEvent({ eventId, event, ...v1ModulesFields(operation) }) }
    },
    test: v1ReportTestEvent
  })
)
