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
const MAX_TRACKED = 10_000

export const makeThrottle = (failuresPerWindow: number): Throttle => {
  const windows = new Map<string, { start: number; failures: number }>()
  const windowStart = (nowMs: number) => nowMs - (nowMs % WINDOW_MS)
  return {
    check: (address, nowMs) => {
      const start = windowStart(nowMs)
      const window = windows.get(address)
      if (window === undefined || window.start !== start || window.failures < failuresPerWindow) return undefined
      return Math.max(1, Math.ceil((start + WINDOW_MS - nowMs) / 1000))
    },
    recordFailure: (address, nowMs) => {
      const start = windowStart(nowMs)
      if (windows.size >= MAX_TRACKED) {
        for (const [key, window] of windows) if (window.start < start) windows.delete(key)
      }
      const window = windows.get(address)
      if (window === undefined || window.start !== start) windows.set(address, { start, failures: 1 })
      else window.failures++
    }
  }
}
