/** Temporal's task queues. Imported by the workflows, so it imports nothing. */

/** The base task queue name; operations and deliveries each get their own queue derived from it. */
export const DEFAULT_TASK_QUEUE = "vehicle-data"

export const taskQueuesOf = (base: string) => ({ operations: `${base}-operations`, deliveries: `${base}-deliveries` })
