/**
 * Shared by the workflows, the worker and the API: plain types, the final-status rule and workflow
 * ids. Sandbox-safe: no Node APIs, no Effect, nothing but TypeScript (and the plain definitions of
 * src/platform/sandboxSafe).
 */
import type { RetryPolicy } from "../src/platform/sandboxSafe/RetryPolicy.js"

export const MODULES = ["fines", "vtv", "tax_debt", "gnc"] as const
export type ModuleName = (typeof MODULES)[number]

/** "fines, vtv, tax_debt or gnc": the modules, as a sentence names them. */
export const MODULES_IN_WORDS = `${MODULES.slice(0, -1).join(", ")} or ${MODULES[MODULES.length - 1]}`

/** An operation's statuses, in the order it goes through them; the last three are final. */
export const OPERATION_STATUSES = ["queued", "processing", "completed", "partial", "failed"] as const
export type OperationStatus = (typeof OPERATION_STATUSES)[number]

/** The statuses of an operation still running (reusable by an identical request). */
export const ACTIVE_STATUSES = ["queued", "processing"] as const satisfies ReadonlyArray<OperationStatus>
export const FINAL_STATUSES = ["completed", "partial", "failed"] as const satisfies ReadonlyArray<OperationStatus>
export type FinalStatus = (typeof FINAL_STATUSES)[number]

export const isFinal = (status: string): status is FinalStatus => (FINAL_STATUSES as ReadonlyArray<string>).includes(status)

/** When an operation ended: its last update once it is final, null before. */
export const completedAtOf = <D>(operation: { readonly status: string; readonly updatedAt: D }): D | null =>
  isFinal(operation.status) ? operation.updatedAt : null

export interface ModuleWarning {
  readonly code: "reduced_coverage"
  readonly message: string
}

export interface ModuleError {
  readonly code: "module_unavailable"
  readonly message: string
  readonly retryable: boolean
}

/** What a module lookup gave: data (possibly with reduced coverage) or a failure. */
export type ModuleOutcome =
  | {
    readonly status: "completed" | "partial"
    readonly data: unknown
    readonly error: null
    readonly warnings: ReadonlyArray<ModuleWarning>
  }
  | { readonly status: "failed"; readonly data: null; readonly error: ModuleError; readonly warnings: ReadonlyArray<ModuleWarning> }

/**
 * The spec's rules for the final state of a modules operation: failed when every module failed;
 * partial when some failed and others answered, or when any answered with reduced coverage;
 * completed otherwise (a module with no records is a correct completion).
 */
export const finalStatus = (outcomes: ReadonlyArray<Pick<ModuleOutcome, "status" | "warnings">>): FinalStatus => {
  if (outcomes.length === 0) return "failed"
  const failed = outcomes.filter((o) => o.status === "failed").length
  if (failed === outcomes.length) return "failed"
  if (failed > 0) return "partial"
  const reduced = outcomes.some((o) => o.status === "partial" || o.warnings.some((w) => w.code === "reduced_coverage"))
  return reduced ? "partial" : "completed"
}

/** Where and how an operation's webhook delivery runs, once the operation's event is recorded. */
export interface DeliverySettings {
  readonly deliveryRetry: RetryPolicy
  /** Temporal only: the task queue of delivery workflows (absent in older histories: the parent's). */
  readonly deliveryTaskQueue?: string
}

export interface ModulesOperationInput extends DeliverySettings {
  readonly operationId: string
  readonly modules: ReadonlyArray<ModuleName>
  readonly retry: RetryPolicy
}

/** A v1 report: the vehicle and every module the account has, looked up in parallel. */
export interface ReportInput extends DeliverySettings {
  readonly operationId: string
  readonly modules: ReadonlyArray<ModuleName>
  readonly retry: RetryPolicy
}

export interface VehicleSearchInput extends DeliverySettings {
  readonly operationId: string
  readonly retry: RetryPolicy
}

/** A delivery's attempt series: the first, then one more per resend. */
export const FIRST_SERIES = 1

/**
 * A delivery and the attempt series a run works for; absent in runs started before resends
 * existed: the first.
 */
export interface DeliveryRef {
  readonly deliveryId: string
  readonly series?: number
}

export interface DeliveryInput extends DeliveryRef {
  readonly retry: RetryPolicy
}

/** The result of a vehicle search: the Vehicle response, or why there is none. */
export type VehicleSearchResult =
  | { readonly ok: true; readonly response: unknown }
  | { readonly ok: false; readonly error: { readonly code: string; readonly message: string; readonly retryable: boolean } }

/**
 * A failed source lookup as the orchestration sees it, whichever engine ran the retries. Only
 * whether trying later may help: what clients read is `sourceUnavailableMessage`.
 */
export interface SourceFailure {
  readonly retryable: boolean
}

/** Canonical module-set key: the requested modules in the spec's order, joined by `+`. */
export const modulesKey = (modules: ReadonlyArray<ModuleName>) => MODULES.filter((m) => modules.includes(m)).join("+")

/**
 * Workflow ids readable in the Temporal UI: the reuse key, then the operation id. The plate
 * appears only as its salted hash (`plateHash`), never in clear.
 */
export const workflowIds = {
  modules: (o: { environment: string; accountId: string; plateHash: string; modules: ReadonlyArray<ModuleName>; operationId: string }) =>
    `modules/${o.environment}/${o.accountId}/${o.plateHash}/${modulesKey(o.modules)}/${o.operationId}`,
  vehicle: (o: { environment: string; accountId: string; plateHash: string; operationId: string }) =>
    `vehicle/${o.environment}/${o.accountId}/${o.plateHash}/${o.operationId}`,
  report: (o: { environment: string; accountId: string; plateHash: string; operationId: string }) =>
    `report/${o.environment}/${o.accountId}/${o.plateHash}/${o.operationId}`,
  /**
   * A delivery's workflow for one attempt series. Delivery ids are never reused
   * (REJECT_DUPLICATE), so each resend runs under its own id; the first series keeps the plain id.
   */
  delivery: (deliveryId: string, series: number) =>
    series === FIRST_SERIES ? `webhook-delivery/${deliveryId}` : `webhook-delivery/${deliveryId}-series-${series}`
}

/**
 * The custom search attributes every workflow carries (registered by the worker at start and by
 * the compose stack): who it belongs to, what it is, and how it ended.
 */
export const SEARCH_ATTRIBUTES = [
  { name: "VdaAccountId", type: "Keyword" },
  { name: "VdaEnvironment", type: "Keyword" },
  { name: "VdaKind", type: "Keyword" },
  { name: "VdaModules", type: "Keyword" },
  { name: "VdaPlateHash", type: "Keyword" },
  { name: "VdaStatus", type: "Keyword" }
] as const

/** Every kind of workflow, as the `VdaKind` search attribute shows it. */
export const WORKFLOW_KINDS = ["modules", "vehicle", "report", "delivery"] as const
export type WorkflowKind = typeof WORKFLOW_KINDS[number]

/** What operators see of a workflow: its search attributes' values (status is added at the end). */
export interface WorkflowLabels {
  readonly accountId: string
  readonly environment: string
  readonly kind: WorkflowKind
  /** The module-set key (`fines+vtv`); empty for other kinds. */
  readonly modules: string
  /** Empty for deliveries. */
  readonly plateHash: string
}

/** Workflow changes rolled out with `patched()`, so histories of runs started before them replay. */
export const PATCHES = {
  /** The final status is written to the `VdaStatus` search attribute. */
  statusSearchAttribute: "status-search-attribute",
  /** A delivery whose attempts all failed inside the activity is settled `failed`. */
  settleExhaustedDelivery: "settle-exhausted-delivery"
} as const

export type SourceName = ModuleName | "vehicle"

const SOURCE_LABELS: Record<SourceName, string> = {
  fines: "fines",
  vtv: "VTV",
  tax_debt: "tax debt",
  gnc: "GNC",
  vehicle: "vehicle"
}

/**
 * The only message a client or a webhook ever reads for a source that could not answer: chosen
 * here, never taken from a failure (which may hold stack traces, SQL or upstream details).
 */
export const sourceUnavailableMessage = (source: SourceName) => `${SOURCE_LABELS[source]} source unavailable`

/**
 * The activities, as the worker registers them and the workflows call them. Failures are thrown
 * (so the engine retries them); the workflows turn a source failure that outlived its retries
 * into the module's `module_unavailable` error.
 */
export interface WorkflowActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  readonly fetchModule: (input: { operationId: string; module: ModuleName }) => Promise<ModuleOutcome>
  readonly recordModule: (input: { operationId: string; module: ModuleName; outcome: ModuleOutcome }) => Promise<void>
  readonly finalizeOperation: (input: { operationId: string; status: FinalStatus }) => Promise<void>
  readonly searchVehicle: (input: { operationId: string }) => Promise<unknown>
  readonly finalizeVehicleSearch: (input: { operationId: string; result: VehicleSearchResult }) => Promise<void>
  /** A report's final status, with its vehicle part. */
  readonly finalizeReport: (input: { operationId: string; status: FinalStatus; vehicle: VehicleSearchResult }) => Promise<void>
  /** Records the final operation's webhook event, once; the delivery to start, if any. */
  readonly emitEvent: (input: { operationId: string }) => Promise<string | null>
  /** One attempt (its number comes from the engine); throws unless the endpoint answered 2xx. */
  readonly attemptDelivery: (input: DeliveryRef & { policy: RetryPolicy }) => Promise<DeliveryStatus>
  /** Settles a delivery still pending after its last attempt failed `failed`; no-op otherwise. */
  readonly settleDelivery: (input: DeliveryRef) => Promise<void>
}

/** Where a delivery ended: confirmed by the endpoint, or out of attempts. */
export type DeliveryStatus = "processed" | "failed"
