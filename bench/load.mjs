/**
 * One load run in a process of its own: autocannon with the options given as JSON, its result
 * printed as JSON. autocannon ends a run on its one-second tick, so a run of a fixed amount
 * reports a duration rounded up to the tick after its last response: such a run is timed here, to
 * its last response.
 */
import autocannon from "autocannon"

const options = JSON.parse(process.argv[2])
let lastResponse = 0
const instance = autocannon(options, (error, result) => {
  if (error) {
    console.error(error)
    process.exit(1)
  }
  const secondsToLastResponse = (lastResponse - result.start.getTime()) / 1000
  console.log(JSON.stringify({ ...result, secondsToLastResponse }))
})
instance.on("response", () => {
  lastResponse = Date.now()
})
