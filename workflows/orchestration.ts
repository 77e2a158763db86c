/**
 * The orchestration of each operation, written once as plain async functions of their
 * activities. `workflows/index.ts` runs them on Temporal (activities through `proxyActivities`);
 * the inline engine runs them in the API process with the same activities. Sandbox-safe.
 */
import {
  finalStatus,
  type FinalStatus,
  type ModuleName,
  type ModuleOutcome,
  type ModulesOperationInput,
  type SourceFailure,
  type VehicleSearchInput,
  type VehicleSearchResult
} from "./shared.js"

/** A source lookup after its retries: the value, or the failure of the last attempt. */
export type Attempted<A> = { readonly ok: true; readonly value: A } | ({ readonly ok: false } & SourceFailure)

export interface ModulesActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  /** Looks the module up (idempotent: a module already recorded answers what was recorded). */
  readonly fetchModule: (input: { operationId: string; module: ModuleName }) => Promise<Attempted<ModuleOutcome>>
  readonly recordModule: (input: { operationId: string; module: ModuleName; outcome: ModuleOutcome }) => Promise<void>
  readonly finalizeOperation: (input: { operationId: string; status: FinalStatus }) => Promise<void>
}

export interface VehicleSearchActivities {
  readonly markProcessing: (operationId: string) => Promise<void>
  readonly searchVehicle: (input: { operationId: string }) => Promise<Attempted<unknown>>
  readonly finalizeVehicleSearch: (input: { operationId: string; result: VehicleSearchResult }) => Promise<void>
}

const failedModule = (failure: SourceFailure): ModuleOutcome => ({
  status: "failed",
  data: null,
  error: { code: "module_unavailable", message: failure.message, retryable: failure.retryable },
  warnings: []
})

/**
 * Mark processing; look every module up in parallel, recording each result as it lands (polling
 * shows progress); then finalize with the status the spec's rules give.
 */
export async function runModulesOperation(acts: ModulesActivities, input: ModulesOperationInput): Promise<FinalStatus> {
  await acts.markProcessing(input.operationId)
  const outcomes = await Promise.all(input.modules.map(async (module) => {
    const attempted = await acts.fetchModule({ operationId: input.operationId, module })
    const outcome = attempted.ok ? attempted.value : failedModule(attempted)
    await acts.recordModule({ operationId: input.operationId, module, outcome })
    return outcome
  }))
  const status = finalStatus(outcomes)
  await acts.finalizeOperation({ operationId: input.operationId, status })
  return status
}

/** Mark processing; search the vehicle; store the Vehicle response (or why there is none). */
export async function runVehicleSearch(acts: VehicleSearchActivities, input: VehicleSearchInput): Promise<VehicleSearchResult> {
  await acts.markProcessing(input.operationId)
  const attempted = await acts.searchVehicle({ operationId: input.operationId })
  const result: VehicleSearchResult = attempted.ok
    ? { ok: true, response: attempted.value }
    : { ok: false, error: { code: "temporarily_unavailable", message: attempted.message, retryable: attempted.retryable } }
  await acts.finalizeVehicleSearch({ operationId: input.operationId, result })
  return result
}
