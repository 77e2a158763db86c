/**
 * Activity timeouts, for the workflows that set them and the configuration that keeps the
 * upstream deadlines inside them. Imported by the workflows, so it imports nothing.
 *
 * Source lookups get the upstream's total deadline (8 s) plus room for the bookkeeping around it;
 * deliveries the sender's 10 s deadline plus room. Every activity heartbeats, so a worker that
 * dies is noticed within the heartbeat timeout, not the whole start-to-close timeout.
 */
export const ACTIVITY_TIMEOUTS = {
  heartbeatMs: 5_000,
  bookkeepingMs: 15_000,
  sourceMs: 15_000,
  deliveryMs: 20_000
} as const
