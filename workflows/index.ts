/**
 * Temporal workflows. Every export is a workflow type. Each binds the shared orchestration to
 * activities proxied with explicit timeouts and retry policies; the source lookups' policy comes
 * with the input (the API's configured policy), and a lookup that fails through its retries
 * becomes the orchestration's failed attempt instead of failing the workflow.
 */
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/common"
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  TimeoutFailure,
  WorkflowIdReusePolicy
} from "@temporalio/workflow"
import { type Attempted, type EventActivities, runDelivery, runModulesOperation, runVehicleSearch } from "./orchestration.js"
import {
  BOOKKEEPING_RETRY,
  type DeliveryInput,
  type DeliveryStatus,
  type FinalStatus,
  type ModulesOperationInput,
  type OperationActivities,
  type RetryPolicy,
  type VehicleSearchInput,
  type VehicleSearchResult,
  workflowIds
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

/**
 * The event step: record the event, then start its delivery as a workflow of its own that
 * outlives this one (retries may take hours). A delivery the API's reconciler started first is
 * already running, which is fine.
 */
const events = (deliveryRetry: RetryPolicy): EventActivities => ({
  emitEvent: bookkeeping.emitEvent,
  startDelivery: async (deliveryId) => {
    try {
      await startChild(webhookDelivery, {
        workflowId: workflowIds.delivery(deliveryId),
        args: [{ deliveryId, retry: deliveryRetry }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE
      })
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error
    }
  }
})

export async function modulesOperation(input: ModulesOperationInput): Promise<FinalStatus> {
  const lookups = sources(input.retry)
  return runModulesOperation({
    markProcessing: bookkeeping.markProcessing,
    fetchModule: (args) => attempt(lookups.fetchModule(args)),
    recordModule: bookkeeping.recordModule,
    finalizeOperation: bookkeeping.finalizeOperation,
    ...events(input.deliveryRetry)
  }, input)
}

export async function vehicleSearch(input: VehicleSearchInput): Promise<VehicleSearchResult> {
  const lookups = sources(input.retry)
  return runVehicleSearch({
    markProcessing: bookkeeping.markProcessing,
    searchVehicle: (args) => attempt(lookups.searchVehicle(args)),
    finalizeVehicleSearch: bookkeeping.finalizeVehicleSearch,
    ...events(input.deliveryRetry)
  }, input)
}

/**
 * One webhook delivery: a single activity under the delivery policy (five attempts in all). The
 * activity records each attempt; its attempt number is Temporal's.
 */
export async function webhookDelivery(input: DeliveryInput): Promise<DeliveryStatus> {
  const { attemptDelivery } = proxyActivities<OperationActivities>({
    // above the sender's 10 s timeout, with room for the bookkeeping around it
    startToCloseTimeout: "30 seconds",
    retry: retryOf(input.retry)
  })
  return runDelivery({ attemptDelivery: (args) => attempt(attemptDelivery({ ...args, policy: input.retry })) }, input)
}
