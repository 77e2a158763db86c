/**
 * Failed sign-in attempts per client address: a fixed one-minute window per address, in this
 * process. An address that has used up its failures is refused every attempt until the window
 * ends, so guessing a 43-character token is hopeless while people who open good links are never
 * slowed. With API_PROCESSES=N the allowance is per process.
 */
export interface Throttle {
  /** The seconds until the next window when `address` has no failures left, otherwise undefined. */
  readonly check: (address: string, nowMs: number) => number | undefined
  readonly recordFailure: (address: string, nowMs: number) => void
}

const WINDOW_MS = 60_000
/** Past this many failing addresses in one window, the newcomers share one allowance. */
const MAX_TRACKED = 10_000
const SHARED = "\u0000shared"

export const makeThrottle = (failuresPerWindow: number): Throttle => {
  let window = -1
  const failures = new Map<string, number>()
  /** Forgets the last window's failures once a new one starts. */
  const enter = (nowMs: number) => {
    const start = nowMs - (nowMs % WINDOW_MS)
    if (start !== window) {
      window = start
      failures.clear()
    }
    return start
  }
  const keyOf = (address: string) => (failures.has(address) || failures.size < MAX_TRACKED ? address : SHARED)
  return {
    check: (address, nowMs) => {
      const start = enter(nowMs)
      if ((failures.get(keyOf(address)) ?? 0) < failuresPerWindow) return undefined
      return Math.max(1, Math.ceil((start + WINDOW_MS - nowMs) / 1000))
    },
    recordFailure: (address, nowMs) => {
      enter(nowMs)
      const key = keyOf(address)
      failures.set(key, (failures.get(key) ?? 0) + 1)
    }
  }
}
