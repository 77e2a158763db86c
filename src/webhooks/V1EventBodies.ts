/**
 * The bodies of v1's events, which the deliveries send but do not build: v1 lives above the
 * webhooks (its report and its flat event shape), so it provides them (`v1/Events.ts`), and names
 * them (`V1Event` in `v1/Api.ts`).
 */
import { Context } from "effect"
import type { ModuleRow, OperationRow } from "../operations/Repo.js"

/** An event to record: its type, and its body once its id and time are known. */
export interface EventOf<Type extends string = string> {
  readonly type: Type
  readonly body: (eventId: string, at: Date) => unknown
}

export class V1EventBodies extends Context.Service<V1EventBodies, {
  /** The event of a final operation created through v1: a report, or a modules operation. */
  readonly ofOperation: (row: OperationRow, modules: ReadonlyArray<ModuleRow>) => EventOf
  /** v1's test event: a sample `report.completed`. */
  readonly test: (eventId: string, at: Date) => unknown
}>()("vda/V1EventBodies") {}
