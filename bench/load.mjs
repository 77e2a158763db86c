/**
 * One load run in a process of its own: autocannon with the options given as JSON, its result
 * printed as JSON. autocannon ends a run on its one-second tick, so a run of a fixed amount
 * reports a duration rounded up to the tick after its last response: such a run is timed here, to
 * its last response.
 *
 * `settleSeconds` (in the options, not autocannon's): the run's first seconds are its ramp-up, and
 * `settled` gives the rate, p50 and p99 of the responses after it. A run opens its connections all
 * at once from a fresh process: for its first half second even the bare Node hello world answers
 * at a p99 of 24-33 ms, against 5-7 ms after, so the ramp-up measures the load generator, not the
 * server. A timed run is lengthened by the ramp-up; a run of an amount keeps its amount.
 */
import autocannon from "autocannon"

const { settleSeconds = 0, ...options } = JSON.parse(process.argv[2])
if (options.duration !== undefined) options.duration += settleSeconds

let started = 0
let lastResponse = 0
const settledLatencies = []

/** The value at `share` of sorted `values` (nearest rank, as autocannon's histogram rounds up). */
const percentile = (values, share) => values.length === 0 ? 0 : values[Math.min(values.length - 1, Math.ceil(share * values.length) - 1)]

const instance = autocannon(options, (error, result) => {
  if (error) {
    console.error(error)
    process.exit(1)
  }
  const secondsToLastResponse = (lastResponse - result.start.getTime()) / 1000
  const latencies = Float64Array.from(settledLatencies).sort()
  const settled = {
    requestsPerSecond: latencies.length / Math.max(0.001, secondsToLastResponse - settleSeconds),
    // whole milliseconds, as autocannon reports its own
    p50: Math.round(percentile(latencies, 0.5)),
    p99: Math.round(percentile(latencies, 0.99))
  }
  console.log(JSON.stringify({ ...result, secondsToLastResponse, settled }))
})
instance.on("start", () => {
  started = Date.now()
})
instance.on("response", (_client, _status, _bytes, responseTime) => {
  lastResponse = Date.now()
  if (lastResponse - started >= settleSeconds * 1000) settledLatencies.push(responseTime)
})
