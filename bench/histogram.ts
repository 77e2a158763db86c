/**
 * Latency histograms as `bench/load.mjs` returns them: [bin, count] pairs, bin k counting the
 * responses that took more than (k - 1) × 10 µs and at most k × 10 µs. Percentiles are nearest-rank
 * and read as the bin's upper edge, so they are never under the true value, by at most 10 µs.
 */
export type Histogram = ReadonlyArray<readonly [bin: number, count: number]>

export const BIN_MS = 0.01

export const merge = (histograms: ReadonlyArray<Histogram>): Histogram => {
  const counts = new Map<number, number>()
  for (const histogram of histograms) for (const [bin, count] of histogram) counts.set(bin, (counts.get(bin) ?? 0) + count)
  return [...counts].sort((a, b) => a[0] - b[0])
}

export const total = (histogram: Histogram) => histogram.reduce((n, [, count]) => n + count, 0)

/** The latency in ms at `share` (0.5, 0.99) of the responses; null without responses. */
export const percentile = (histogram: Histogram, share: number): number | null => {
  const n = total(histogram)
  if (n === 0) return null
  const rank = Math.max(1, Math.ceil(share * n))
  let seen = 0
  for (const [bin, count] of histogram) {
    seen += count
    if (seen >= rank) return Number((bin * BIN_MS).toFixed(2))
  }
  return Number((histogram.at(-1)![0] * BIN_MS).toFixed(2))
}
