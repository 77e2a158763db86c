// Loaded into the server by `npm run bench:profile` (node --import): V8's sampling heap profiler,
// counting objects already collected too, so the profile shows what requests allocate, not what
// stays. SIGUSR2 starts sampling; the next SIGUSR2 writes the profile to VDA_ALLOCATION_PROFILE.
import * as Fs from "node:fs"
import * as Inspector from "node:inspector"

const session = new Inspector.Session()
session.connect()
let sampling = false

process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    })
    return
  }
  sampling = false
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error) return console.error("allocation profile failed", error)
    const file = process.env.VDA_ALLOCATION_PROFILE
    Fs.writeFileSync(`${file}.partial`, JSON.stringify(result.profile))
    Fs.renameSync(`${file}.partial`, file) // whole, or not there yet
    console.log("allocation profile written")
  })
})
