/**
 * The orchestration of each operation, written once as plain async functions of their
 * activities. `workflows/index.ts` runs them on Temporal (activities through `proxyActivities`);
 * the inline engine runs them in the API process with the same activities. Sandbox-safe.
 */
import {
  type DeliveryInput,
  type DeliveryRef,
  type DeliveryStatus,
  finalStatus,
  type FinalStatus,
  type ModuleName,
  type ModuleOutcome,
  type ModulesOperationInput,
  type ReportInput,
  type SourceFailure,
  sourceUnavailableMessage,
  type VehicleSearchInput,
  type VehicleSearchResult
} from "./shared.js"

/** A source lookup after its retries: the value, or the failure of the last attempt. */
export type Attempted<A> = { readonly ok: true; readonly value: A } | ({ readonly ok: false } & SourceFailure)

/** Publishing the final state: the webhook event (recorded once) and the start of its delivery. */
export interface EventActivities {
  readonly emitEvent: (input: { operationId: string }) => Promise<string | null>
  readonly startDelivery: (deliveryId: string) => Promise<void>
}

export interface ModulesActivities extends EventActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  /** Looks the module up (idempotent: a module already recorded answers what was recorded). */
  readonly fetchModule: (input: { operationId: string; module: ModuleName }) => Promise<Attempted<ModuleOutcome>>
  readonly recordModule: (input: { operationId: string; module: ModuleName; outcome: ModuleOutcome }) => Promise<void>
  readonly finalizeOperation: (input: { operationId: string; status: FinalStatus }) => Promise<void>
}

export interface VehicleSearchActivities extends EventActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  readonly searchVehicle: (input: { operationId: string }) => Promise<Attempted<unknown>>
  readonly finalizeVehicleSearch: (input: { operationId: string; result: VehicleSearchResult }) => Promise<void>
}

export interface ReportActivities extends EventActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  readonly fetchModule: ModulesActivities["fetchModule"]
  readonly recordModule: ModulesActivities["recordModule"]
  readonly searchVehicle: VehicleSearchActivities["searchVehicle"]
  readonly finalizeReport: (input: { operationId: string; status: FinalStatus; vehicle: VehicleSearchResult }) => Promise<void>
}

export interface DeliveryActivities {
  /** The delivery's attempts, retried by the engine's policy: ok once the endpoint answered 2xx. */
  readonly attemptDelivery: (input: DeliveryRef) => Promise<Attempted<DeliveryStatus>>
  /** Settles the delivery `failed` if it is still pending (its attempts failed inside the activity). */
  readonly settleDelivery: (input: DeliveryRef) => Promise<void>
}

/** Sends the event when the operation's webhook is on (a no-op otherwise). */
const publish = async (acts: EventActivities, operationId: string) => {
  const deliveryId = await acts.emitEvent({ operationId })
  if (deliveryId !== null) await acts.startDelivery(deliveryId)
}

/** A module whose source could not answer, with the stable message clients and webhooks read. */
export const failedModule = (module: ModuleName, failure: SourceFailure): ModuleOutcome => ({
  status: "failed",
  data: null,
  error: { code: "module_unavailable", message: sourceUnavailableMessage(module), retryable: failure.retryable },
  warnings: []
})

/** A vehicle search whose source could not answer. */
export const failedVehicleSearch = (failure: SourceFailure): VehicleSearchResult => ({
  ok: false,
  error: { code: "temporarily_unavailable", message: sourceUnavailableMessage("vehicle"), retryable: failure.retryable }
})

/**
 * Mark processing; look every module up in parallel, recording each result as it lands (polling
 * shows progress); finalize with the status the spec's rules give; publish the event.
 */
export async function runModulesOperation(acts: ModulesActivities, input: ModulesOperationInput): Promise<FinalStatus> {
  await acts.markProcessing(input.operationId)
  const outcomes = await Promise.all(input.modules.map(async (module) => {
    const attempted = await acts.fetchModule({ operationId: input.operationId, module })
    const outcome = attempted.ok ? attempted.value : failedModule(module, attempted)
    await acts.recordModule({ operationId: input.operationId, module, outcome })
    return outcome
  }))
  const status = finalStatus(outcomes)
  await acts.finalizeOperation({ operationId: input.operationId, status })
  await publish(acts, input.operationId)
  return status
}

/** Mark processing; search the vehicle; store the Vehicle response (or why there is none); publish. */
export async function runVehicleSearch(acts: VehicleSearchActivities, input: VehicleSearchInput): Promise<VehicleSearchResult> {
  await acts.markProcessing(input.operationId)
  const attempted = await acts.searchVehicle({ operationId: input.operationId })
  const result: VehicleSearchResult = attempted.ok ? { ok: true, response: attempted.value } : failedVehicleSearch(attempted)
  await acts.finalizeVehicleSearch({ operationId: input.operationId, result })
  await publish(acts, input.operationId)
  return result
}

/**
 * A report's status: the modules' rules with the vehicle as one more part. A vehicle not found is
 * a partial report; a vehicle source that could not answer is a failed part.
 */
export const reportStatus = (vehicle: VehicleSearchResult, outcomes: ReadonlyArray<ModuleOutcome>): FinalStatus => {
  const found = vehicle.ok && (vehicle.response as { found?: unknown } | null)?.found === true
  const vehiclePart: ModuleOutcome = vehicle.ok
    ? { status: found ? "completed" : "partial", data: null, error: null, warnings: [] }
    : { status: "failed", data: null, error: { code: "module_unavailable", message: vehicle.error.message, retryable: vehicle.error.retryable }, warnings: [] }
  return finalStatus([vehiclePart, ...outcomes])
}

/**
 * Mark processing; look the vehicle and every module up in parallel, recording each module as it
 * lands; finalize with the vehicle part; publish the event.
 */
export async function runReport(acts: ReportActivities, input: ReportInput): Promise<FinalStatus> {
  await acts.markProcessing(input.operationId)
  const [vehicle, outcomes] = await Promise.all([
    acts.searchVehicle({ operationId: input.operationId }).then((attempted): VehicleSearchResult =>
      attempted.ok ? { ok: true, response: attempted.value } : failedVehicleSearch(attempted)),
    Promise.all(input.modules.map(async (module) => {
      const attempted = await acts.fetchModule({ operationId: input.operationId, module })
      const outcome = attempted.ok ? attempted.value : failedModule(module, attempted)
      await acts.recordModule({ operationId: input.operationId, module, outcome })
      return outcome
    }))
  ])
  const status = reportStatus(vehicle, outcomes)
  await acts.finalizeReport({ operationId: input.operationId, status, vehicle })
  await publish(acts, input.operationId)
  return status
}

/**
 * A webhook delivery: attempts until the endpoint confirms or the policy's attempts run out.
 * Whatever failed (the endpoint, or the attempt itself), it ends `processed` or `failed`.
 */
export async function runDelivery(acts: DeliveryActivities, input: DeliveryInput): Promise<DeliveryStatus> {
  // the series goes with each activity, so a run of an earlier series never touches a resent delivery
  const ref: DeliveryRef = input.series === undefined
    ? { deliveryId: input.deliveryId }
    : { deliveryId: input.deliveryId, series: input.series }
  const attempted = await acts.attemptDelivery(ref)
  if (attempted.ok) return attempted.value
  await acts.settleDelivery(ref)
  return "failed"
}
