/**
 * Temporal workflows. Every export is a workflow type. Each binds the shared orchestration to
 * activities proxied with explicit timeouts and retry policies; the source lookups' policy comes
 * with the input (the API's configured policy), and a lookup that fails through its retries
 * becomes the orchestration's failed attempt instead of failing the workflow.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from "@temporalio/workflow"
import { type Attempted, runModulesOperation, runVehicleSearch } from "./orchestration.js"
import {
  BOOKKEEPING_RETRY,
  type FinalStatus,
  type ModulesOperationInput,
  type OperationActivities,
  type RetryPolicy,
  type VehicleSearchInput,
  type VehicleSearchResult
} from "./shared.js"

/** In Temporal's terms; `maximumAttempts: 0` (unlimited) is expressed by leaving it out. */
const retryOf = (policy: RetryPolicy) => ({
  ...(policy.maximumAttempts > 0 ? { maximumAttempts: policy.maximumAttempts } : {}),
  initialInterval: policy.initialIntervalMs,
  backoffCoefficient: policy.backoffCoefficient,
  maximumInterval: policy.maximumIntervalMs
})

const bookkeeping = proxyActivities<OperationActivities>({
  startToCloseTimeout: "30 seconds",
  retry: retryOf(BOOKKEEPING_RETRY)
})

const sources = (policy: RetryPolicy) =>
  proxyActivities<OperationActivities>({ startToCloseTimeout: "1 minute", retry: retryOf(policy) })

/** What an activity that failed for good says, for the module's or the search's error. */
const attempt = async <A>(call: Promise<A>): Promise<Attempted<A>> => {
  try {
    return { ok: true, value: await call }
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error
    const cause = error.cause
    if (cause instanceof ApplicationFailure) return { ok: false, message: cause.message, retryable: !cause.nonRetryable }
    if (cause instanceof TimeoutFailure) return { ok: false, message: "The source did not answer in time", retryable: true }
    return { ok: false, message: error.message, retryable: true }
  }
}

export async function modulesOperation(input: ModulesOperationInput): Promise<FinalStatus> {
  const lookups = sources(input.retry)
  return runModulesOperation({
    markProcessing: bookkeeping.markProcessing,
    fetchModule: (args) => attempt(lookups.fetchModule(args)),
    recordModule: bookkeeping.recordModule,
    finalizeOperation: bookkeeping.finalizeOperation
  }, input)
}

export async function vehicleSearch(input: VehicleSearchInput): Promise<VehicleSearchResult> {
  const lookups = sources(input.retry)
  return runVehicleSearch({
    markProcessing: bookkeeping.markProcessing,
    searchVehicle: (args) => attempt(lookups.searchVehicle(args)),
    finalizeVehicleSearch: bookkeeping.finalizeVehicleSearch
  }, input)
}
