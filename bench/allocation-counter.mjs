// Loaded into the service by `npm run bench` (node --import): counts the bytes the process's V8 heap
// allocates between two SIGUSR2, and writes {bytes, collections} to BENCH_ALLOCATION_FILE at the
// second. Allocated = heap in use at the end - in use at the start + what every collection in between
// freed (v8.GCProfiler reports the heap before and after each one): exact for the JS heap, sampled
// nowhere. Buffers' backing stores live outside that heap and are not counted.
import * as Fs from "node:fs"
import * as V8 from "node:v8"

let running = null

process.on("SIGUSR2", () => {
  if (running === null) {
    const profiler = new V8.GCProfiler()
    profiler.start()
    running = { profiler, usedAtStart: V8.getHeapStatistics().used_heap_size }
    return
  }
  const usedAtEnd = V8.getHeapStatistics().used_heap_size
  const { statistics } = running.profiler.stop()
  let freed = 0
  for (const gc of statistics) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize
  const result = { bytes: usedAtEnd - running.usedAtStart + freed, collections: statistics.length }
  running = null
  const file = process.env.BENCH_ALLOCATION_FILE
  Fs.writeFileSync(`${file}.partial`, JSON.stringify(result))
  Fs.renameSync(`${file}.partial`, file)
})
