// Loaded into the server by `npm run bench:profile` (node --import), beside V8's `--cpu-prof`,
// which profiles from start-up to exit: the measured window, to keep only its samples. SIGUSR2
// notes its start and the next SIGUSR2 its end, on the clock of the profile's timestamps
// (monotonic, in µs), written to VDA_CPU_WINDOW as {"from": µs, "to": µs}.
import * as Fs from "node:fs"

let from = null

const now = () => Number(process.hrtime.bigint() / 1000n)

process.on("SIGUSR2", () => {
  if (from === null) {
    from = now()
    return
  }
  const window = { from, to: now() }
  from = null
  const file = process.env.VDA_CPU_WINDOW
  Fs.writeFileSync(`${file}.partial`, JSON.stringify(window))
  Fs.renameSync(`${file}.partial`, file)
})
