/**
 * Hand-built Temporal workflow histories, for replaying workflows without a server.
 *
 * Each workflow task that schedules commands must carry `coreUsedFlags: [1, 2]`: without flag 1
 * the replayer does not check activity types, and a renamed or reordered activity would pass.
 */
import { defaultPayloadConverter } from "@temporalio/common"
import { temporal } from "@temporalio/proto"

const E = temporal.api.enums.v1.EventType
const TIME = { seconds: 1795305600, nanos: 0 }
const seconds = (s: number) => ({ seconds: s, nanos: 0 })
const TASK_QUEUE = { name: "vehicle-data", kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL }
const CORE_FLAGS = [1, 2]

const payloads = (...values: ReadonlyArray<unknown>) => ({ payloads: values.map((v) => defaultPayloadConverter.toPayload(v)) })

export class HistoryBuilder {
  private readonly events: Array<temporal.api.history.v1.IHistoryEvent> = []
  private readonly scheduled = new Map<string, { readonly id: number; readonly started?: number }>()

  private add(type: keyof typeof E, key: string, attributes: object) {
    const eventId = this.events.length + 1
    this.events.push({ eventId, eventTime: TIME, eventType: E[type], [key]: attributes } as unknown as temporal.api.history.v1.IHistoryEvent)
    return eventId
  }

  started(workflowType: string, input: unknown) {
    this.add("EVENT_TYPE_WORKFLOW_EXECUTION_STARTED", "workflowExecutionStartedEventAttributes", {
      workflowType: { name: workflowType },
      taskQueue: TASK_QUEUE,
      input: payloads(input),
      workflowTaskTimeout: seconds(10),
      originalExecutionRunId: "run-1",
      firstExecutionRunId: "run-1",
      attempt: 1
    })
    return this
  }

  /** A workflow task (scheduled, started, completed); returns the id its commands refer to. */
  workflowTask(): number {
    const scheduled = this.add("EVENT_TYPE_WORKFLOW_TASK_SCHEDULED", "workflowTaskScheduledEventAttributes", {
      taskQueue: TASK_QUEUE,
      startToCloseTimeout: seconds(10),
      attempt: 1
    })
    const started = this.add("EVENT_TYPE_WORKFLOW_TASK_STARTED", "workflowTaskStartedEventAttributes", { scheduledEventId: scheduled })
    return this.add("EVENT_TYPE_WORKFLOW_TASK_COMPLETED", "workflowTaskCompletedEventAttributes", {
      scheduledEventId: scheduled,
      startedEventId: started,
      sdkMetadata: { coreUsedFlags: CORE_FLAGS }
    })
  }

  /** Activity ids are the TS SDK's per-workflow sequence numbers: "1", "2", … */
  schedule(task: number, activityId: string, activityType: string, input: unknown) {
    const id = this.add("EVENT_TYPE_ACTIVITY_TASK_SCHEDULED", "activityTaskScheduledEventAttributes", {
      activityId,
      activityType: { name: activityType },
      taskQueue: TASK_QUEUE,
      input: payloads(input),
      startToCloseTimeout: seconds(30),
      workflowTaskCompletedEventId: task
    })
    this.scheduled.set(activityId, { id })
    return this
  }

  private start(activityId: string) {
    const { id } = this.scheduled.get(activityId)!
    const started = this.add("EVENT_TYPE_ACTIVITY_TASK_STARTED", "activityTaskStartedEventAttributes", { scheduledEventId: id, attempt: 1 })
    return { id, started }
  }

  complete(activityId: string, result?: unknown) {
    const { id, started } = this.start(activityId)
    this.add("EVENT_TYPE_ACTIVITY_TASK_COMPLETED", "activityTaskCompletedEventAttributes", {
      scheduledEventId: id,
      startedEventId: started,
      ...(result === undefined ? {} : { result: payloads(result) })
    })
    return this
  }

  /** The activity failed for good (its retries exhausted, or not retryable). */
  fail(activityId: string, failure: { readonly type: string; readonly message: string; readonly nonRetryable: boolean }) {
    const { id, started } = this.start(activityId)
    this.add("EVENT_TYPE_ACTIVITY_TASK_FAILED", "activityTaskFailedEventAttributes", {
      scheduledEventId: id,
      startedEventId: started,
      failure: {
        message: failure.message,
        applicationFailureInfo: { type: failure.type, nonRetryable: failure.nonRetryable }
      },
      retryState: failure.nonRetryable
        ? temporal.api.enums.v1.RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE
        : temporal.api.enums.v1.RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED
    })
    return this
  }

  /** The workflow asks for a child workflow; returns the id its outcome refers to. */
  startChild(task: number, workflowType: string, workflowId: string, input: unknown) {
    return this.add("EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED", "startChildWorkflowExecutionInitiatedEventAttributes", {
      namespace: "default",
      workflowId,
      workflowType: { name: workflowType },
      taskQueue: TASK_QUEUE,
      input: payloads(input),
      parentClosePolicy: temporal.api.enums.v1.ParentClosePolicy.PARENT_CLOSE_POLICY_ABANDON,
      workflowIdReusePolicy: temporal.api.enums.v1.WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
      workflowTaskCompletedEventId: task
    })
  }

  childStarted(initiated: number, workflowType: string, workflowId: string) {
    this.add("EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED", "childWorkflowExecutionStartedEventAttributes", {
      namespace: "default",
      initiatedEventId: initiated,
      workflowExecution: { workflowId, runId: "child-run-1" },
      workflowType: { name: workflowType }
    })
    return this
  }

  /** The child could not start because a workflow with its id already exists. */
  childAlreadyExists(initiated: number, workflowType: string, workflowId: string) {
    this.add("EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED", "startChildWorkflowExecutionFailedEventAttributes", {
      namespace: "default",
      workflowId,
      workflowType: { name: workflowType },
      cause: temporal.api.enums.v1.StartChildWorkflowExecutionFailedCause
        .START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_WORKFLOW_ALREADY_EXISTS,
      initiatedEventId: initiated,
      workflowTaskCompletedEventId: initiated - 1
    })
    return this
  }

  completed(task: number, result: unknown) {
    this.add("EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED", "workflowExecutionCompletedEventAttributes", {
      result: payloads(result),
      workflowTaskCompletedEventId: task
    })
    return this
  }

  build() {
    return temporal.api.history.v1.History.fromObject({ events: this.events })
  }
}
