/**
 * Temporal workflows. Every export is a workflow type. Each binds the shared orchestration to
 * activities proxied with explicit timeouts, heartbeats and retry policies; the source lookups'
 * policy comes with the input (the API's configured policy), and a lookup that fails through its
 * retries becomes the orchestration's failed attempt instead of failing the workflow.
 */
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/common"
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  patched,
  proxyActivities,
  startChild,
  upsertSearchAttributes,
  WorkflowIdReusePolicy,
  workflowInfo
} from "@temporalio/workflow"
import { type Attempted, type EventActivities, runDelivery, runModulesOperation, runReport, runVehicleSearch } from "./orchestration.js"
import { searchAttributeKeys, searchAttributesOf, workflowMetadataOf } from "./searchAttributes.js"
import { ACTIVITY_TIMEOUTS } from "../src/platform/sandboxSafe/ActivityTimeouts.js"
import { BOOKKEEPING_RETRY, type RetryPolicy, temporalRetryOf } from "../src/platform/sandboxSafe/RetryPolicy.js"
import {
  type DeliveryInput,
  type DeliverySettings,
  type DeliveryStatus,
  type FinalStatus,
  FIRST_SERIES,
  type ModulesOperationInput,
  type WorkflowActivities,
  PATCHES,
  type ReportInput,
  type VehicleSearchInput,
  type VehicleSearchResult,
  workflowIds
} from "./shared.js"

const activities = (startToCloseMs: number, policy: RetryPolicy) =>
  proxyActivities<WorkflowActivities>({
    startToCloseTimeout: startToCloseMs,
    heartbeatTimeout: ACTIVITY_TIMEOUTS.heartbeatMs,
    retry: temporalRetryOf(policy)
  })

const bookkeeping = activities(ACTIVITY_TIMEOUTS.bookkeepingMs, BOOKKEEPING_RETRY)

/** A lookup that failed for good: only whether it may be retried later (the message is ours). */
const attempt = async <A>(call: Promise<A>): Promise<Attempted<A>> => {
  try {
    return { ok: true, value: await call }
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error
    return { ok: false, retryable: !(error.cause instanceof ApplicationFailure && error.cause.nonRetryable) }
  }
}

/** The final status, searchable as `VdaStatus` (runs started before this change replay without it). */
const recordStatus = (status: string) => {
  if (patched(PATCHES.statusSearchAttribute)) upsertSearchAttributes([{ key: searchAttributeKeys.status, value: status }])
}

/**
 * The event step: record the event, then start its delivery as a workflow of its own that
 * outlives this one (retries may take hours), labelled with this workflow's account and
 * environment. A delivery the API's reconciler started first is already running, which is fine.
 */
const events = ({ deliveryRetry, deliveryTaskQueue }: DeliverySettings): EventActivities => ({
  emitEvent: bookkeeping.emitEvent,
  startDelivery: async (deliveryId) => {
    const parent = workflowInfo().typedSearchAttributes
    const labels = {
      accountId: parent.get(searchAttributeKeys.accountId) ?? "",
      environment: parent.get(searchAttributeKeys.environment) ?? "",
      kind: "delivery",
      modules: "",
      plateHash: ""
    } as const
    try {
      await startChild(webhookDelivery, {
        // a newly recorded event: its delivery's first series
        workflowId: workflowIds.delivery(deliveryId, FIRST_SERIES),
        ...(deliveryTaskQueue === undefined ? {} : { taskQueue: deliveryTaskQueue }),
        args: [{ deliveryId, retry: deliveryRetry }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...(labels.accountId === "" ? {} : { typedSearchAttributes: searchAttributesOf(labels) }),
        memo: workflowMetadataOf(labels, deliveryId).memo
      })
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error
    }
  }
})

export async function modulesOperation(input: ModulesOperationInput): Promise<FinalStatus> {
  const lookups = activities(ACTIVITY_TIMEOUTS.sourceMs, input.retry)
  const status = await runModulesOperation({
    markProcessing: bookkeeping.markProcessing,
    fetchModule: (args) => attempt(lookups.fetchModule(args)),
    recordModule: bookkeeping.recordModule,
    finalizeOperation: bookkeeping.finalizeOperation,
    ...events(input)
  }, input)
  recordStatus(status)
  return status
}

export async function vehicleSearch(input: VehicleSearchInput): Promise<VehicleSearchResult> {
  const lookups = activities(ACTIVITY_TIMEOUTS.sourceMs, input.retry)
  const result = await runVehicleSearch({
    markProcessing: bookkeeping.markProcessing,
    searchVehicle: (args) => attempt(lookups.searchVehicle(args)),
    finalizeVehicleSearch: bookkeeping.finalizeVehicleSearch,
    ...events(input)
  }, input)
  recordStatus(result.ok ? "completed" : "failed")
  return result
}

export async function report(input: ReportInput): Promise<FinalStatus> {
  const lookups = activities(ACTIVITY_TIMEOUTS.sourceMs, input.retry)
  const status = await runReport({
    markProcessing: bookkeeping.markProcessing,
    fetchModule: (args) => attempt(lookups.fetchModule(args)),
    recordModule: bookkeeping.recordModule,
    searchVehicle: (args) => attempt(lookups.searchVehicle(args)),
    finalizeReport: bookkeeping.finalizeReport,
    ...events(input)
  }, input)
  recordStatus(status)
  return status
}

/**
 * One webhook delivery: a single activity under the delivery policy (five attempts in all). The
 * activity records each attempt; its attempt number is Temporal's. If every attempt failed inside
 * the activity (not at the endpoint), the delivery is settled `failed` all the same.
 */
export async function webhookDelivery(input: DeliveryInput): Promise<DeliveryStatus> {
  const { attemptDelivery } = activities(ACTIVITY_TIMEOUTS.deliveryMs, input.retry)
  const status = await runDelivery({
    attemptDelivery: (args) => attempt(attemptDelivery({ ...args, policy: input.retry })),
    settleDelivery: async (args) => {
      if (patched(PATCHES.settleExhaustedDelivery)) await bookkeeping.settleDelivery(args)
    }
  }, input)
  recordStatus(status)
  return status
}
