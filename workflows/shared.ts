/**
 * Shared by the workflows, the worker and the API: plain types, the final-status rule, retry
 * policies and workflow ids. Sandbox-safe: no Node APIs, no Effect, nothing but TypeScript.
 */

export const MODULES = ["fines", "vtv", "tax_debt", "gnc"] as const
export type ModuleName = (typeof MODULES)[number]

export type OperationStatus = "queued" | "processing" | "completed" | "partial" | "failed"
export type FinalStatus = "completed" | "partial" | "failed"

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

/** An activity retry policy, in the terms of Temporal's RetryPolicy (milliseconds). */
export interface RetryPolicy {
  readonly maximumAttempts: number
  readonly initialIntervalMs: number
  readonly backoffCoefficient: number
  readonly maximumIntervalMs: number
}

/** Module and vehicle-source lookups: 3 attempts (first included), 1 s then 2 s apart. */
export const SOURCE_RETRY: RetryPolicy = {
  maximumAttempts: 3,
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 10_000
}

/** Bookkeeping activities (database writes): retried until they succeed, briefly apart. */
export const BOOKKEEPING_RETRY: RetryPolicy = {
  maximumAttempts: 0,
  initialIntervalMs: 500,
  backoffCoefficient: 2,
  maximumIntervalMs: 30_000
}

/** The delay before attempt `attempt + 1` after `attempt` failed (Temporal's formula, no jitter). */
export const retryDelayMs = (policy: RetryPolicy, attempt: number) =>
  Math.min(policy.initialIntervalMs * Math.pow(policy.backoffCoefficient, attempt - 1), policy.maximumIntervalMs)

/**
 * Webhook deliveries: 5 attempts in all (the first included), 1 min, 5 min, 25 min and 2 h apart
 * (overridable for tests through WEBHOOK_RETRY_*).
 */
export const DELIVERY_RETRY: RetryPolicy = {
  maximumAttempts: 5,
  initialIntervalMs: 60_000,
  backoffCoefficient: 5,
  maximumIntervalMs: 7_200_000
}

export interface ModulesOperationInput {
  readonly operationId: string
  readonly modules: ReadonlyArray<ModuleName>
  readonly retry: RetryPolicy
  /** The policy of the webhook delivery the operation's event starts. */
  readonly deliveryRetry: RetryPolicy
}

export interface VehicleSearchInput {
  readonly operationId: string
  readonly retry: RetryPolicy
  readonly deliveryRetry: RetryPolicy
}

export interface DeliveryInput {
  readonly deliveryId: string
  readonly retry: RetryPolicy
}

/** The result of a vehicle search: the Vehicle response, or why there is none. */
export type VehicleSearchResult =
  | { readonly ok: true; readonly response: unknown }
  | { readonly ok: false; readonly error: { readonly code: string; readonly message: string; readonly retryable: boolean } }

/** A failed source lookup as the orchestration sees it, whichever engine ran the retries. */
export interface SourceFailure {
  readonly message: string
  readonly retryable: boolean
}

export const DEFAULT_TASK_QUEUE = "vehicle-data"

/** Canonical module-set key: the requested modules in the spec's order, joined by `+`. */
export const modulesKey = (modules: ReadonlyArray<ModuleName>) => MODULES.filter((m) => modules.includes(m)).join("+")

/** Workflow ids readable in the Temporal UI: the reuse key, then the operation id. */
export const workflowIds = {
  modules: (o: { environment: string; accountId: string; plate: string; modules: ReadonlyArray<ModuleName>; operationId: string }) =>
    `modules/${o.environment}/${o.accountId}/${o.plate}/${modulesKey(o.modules)}/${o.operationId}`,
  vehicle: (o: { environment: string; accountId: string; plate: string; operationId: string }) =>
    `vehicle/${o.environment}/${o.accountId}/${o.plate}/${o.operationId}`,
  delivery: (deliveryId: string) => `webhook-delivery/${deliveryId}`
}

/**
 * The activities, as the worker registers them and the workflows call them. Failures are thrown
 * (so the engine retries them); the workflows turn a source failure that outlived its retries
 * into the module's `module_unavailable` error.
 */
export interface OperationActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  readonly fetchModule: (input: { operationId: string; module: ModuleName }) => Promise<ModuleOutcome>
  readonly recordModule: (input: { operationId: string; module: ModuleName; outcome: ModuleOutcome }) => Promise<void>
  readonly finalizeOperation: (input: { operationId: string; status: FinalStatus }) => Promise<void>
  readonly searchVehicle: (input: { operationId: string }) => Promise<unknown>
  readonly finalizeVehicleSearch: (input: { operationId: string; result: VehicleSearchResult }) => Promise<void>
  /** Records the final operation's webhook event, once; the delivery to start, if any. */
  readonly emitEvent: (input: { operationId: string }) => Promise<string | null>
  /** One attempt (its number comes from the engine); throws unless the endpoint answered 2xx. */
  readonly attemptDelivery: (input: { deliveryId: string; policy: RetryPolicy }) => Promise<DeliveryStatus>
}

/** Where a delivery ended: confirmed by the endpoint, or out of attempts. */
export type DeliveryStatus = "processed" | "failed"
