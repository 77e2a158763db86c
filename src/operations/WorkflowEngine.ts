/**
 * The port through which operations are run: the inline engine (in this process) or Temporal.
 * Either way the same orchestration (`workflows/orchestration.ts`) runs the same activities.
 */
import { Context, type Effect } from "effect"
import type { ModuleName } from "../../workflows/shared.js"
import type { Environment } from "../platform/http/RequestContext.js"

export type StartRequest =
  | {
    readonly kind: "modules"
    readonly operationId: string
    readonly accountId: string
    readonly environment: Environment
    readonly plate: string
    readonly modules: ReadonlyArray<ModuleName>
  }
  | {
    readonly kind: "report"
    readonly operationId: string
    readonly accountId: string
    readonly environment: Environment
    readonly plate: string
    readonly modules: ReadonlyArray<ModuleName>
  }
  | {
    readonly kind: "vehicle"
    readonly operationId: string
    readonly accountId: string
    readonly environment: Environment
    readonly plate: string
  }

/**
 * A webhook delivery's attempt series to run, with whose it is (operators find deliveries by
 * account). Each series is a run of its own: a resend starts the next one.
 */
export interface DeliveryStartRequest {
  readonly deliveryId: string
  readonly series: number
  readonly accountId: string
  readonly environment: Environment
}

export const deliveryStartRequestOf = (row: {
  readonly id: string
  readonly series: number
  readonly accountId: string
  readonly environment: Environment
}): DeliveryStartRequest => ({
  deliveryId: row.id,
  series: row.series,
  accountId: row.accountId,
  environment: row.environment
})

/** Whether the engine can run operations now, for `/readyz`; `detail` says why not, never a secret. */
export interface EngineReadiness {
  readonly engine: "inline" | "temporal"
  readonly up: boolean
  readonly detail?: string
}

export class WorkflowEngine extends Context.Service<WorkflowEngine, {
  /**
   * Starts the operation's workflow; idempotent (starting one already running is a no-op).
   * Never fails the caller: an operation that could not be started is picked up by recovery.
   */
  readonly start: (request: StartRequest) => Effect.Effect<void>
  /** Starts a webhook delivery's workflow; idempotent, and never fails the caller, like `start`. */
  readonly startDelivery: (request: DeliveryStartRequest) => Effect.Effect<void>
  /** Answers within about a second, and never fails. */
  readonly readiness: Effect.Effect<EngineReadiness>
}>()("vda/WorkflowEngine") {}

export const startRequestOf = (row: {
  readonly id: string
  readonly accountId: string
  readonly environment: Environment
  readonly plate: string
  readonly input:
    | { readonly kind: "modules" | "report"; readonly modules: ReadonlyArray<ModuleName> }
    | { readonly kind: "vehicle" }
}): StartRequest =>
  row.input.kind === "vehicle"
    ? { kind: "vehicle", operationId: row.id, accountId: row.accountId, environment: row.environment, plate: row.plate }
    : { kind: row.input.kind, operationId: row.id, accountId: row.accountId, environment: row.environment, plate: row.plate, modules: row.input.modules }
