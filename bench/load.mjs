// One load run in a process of its own: autocannon, driven by the JSON spec in the file named by
// argv[2]; prints one JSON result on stdout.
//
// A timed run (durationS) stops sending when its time is up and then waits for the answers still in
// flight (at most one per connection): autocannon's own timed end drops them, and a request the
// target answered and charged but the client never saw would make the metering check meaningless.
// Its rate is every response over the time from the first request to the last response: nothing
// at the start or the end of the run is left out. A run of `amount` requests sends exactly that many.
//
// Latencies are kept in bins of 10 µs (bench/histogram.ts), so that runs can be merged exactly.
//
// `draw` makes each request's key and plate a draw of a seeded PRNG (mulberry32): every target gets
// the same sequence of draws for the same seed.
import autocannon from "autocannon"
import { readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"))

const mulberry32 = (seed) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
// the sandbox gives these digits a scenario of their own (docs/api.md, Sandbox): a new plate never has them
const SCENARIO_DIGITS = new Set(["000", "111", "222", "333", "444", "404", "202"])

const drawRequest = (draw) => {
  const random = mulberry32(draw.seed)
  const pick = (list) => list[Math.floor(random() * list.length)]
  switch (draw.kind) {
    case "key-and-plate": {
      const keys = JSON.parse(readFileSync(draw.keysFile, "utf8"))
      const plates = JSON.parse(readFileSync(draw.platesFile, "utf8"))
      return (request) => {
        const key = pick(keys)
        request.path = draw.pathTemplate.replace("{plate}", pick(plates))
        request.headers = { ...request.headers, "x-api-key": key }
        return request
      }
    }
    case "new-plate":
      return (request) => {
        let digits
        do digits = String(Math.floor(random() * 1000)).padStart(3, "0")
        while (SCENARIO_DIGITS.has(digits))
        const plate = pick(LETTERS) + pick(LETTERS) + digits + pick(LETTERS) + pick(LETTERS)
        request.path = draw.pathTemplate.replace("{plate}", plate)
        return request
      }
    default:
      throw new Error(`unknown draw ${draw.kind}`)
  }
}

const bins = new Map()
const statuses = {}
const errorCodes = {}
let found = 0
let lastResponse = 0
const clients = []

const request = { ...spec.request }
if (spec.draw) request.setupRequest = drawRequest(spec.draw)
if (spec.expectFound || spec.countErrorCodes) {
  request.onResponse = (status, body) => {
    if (status === 200 && spec.expectFound && body.includes('"found":true')) found++
    if (status >= 300 && spec.countErrorCodes) {
      let code = "unreadable"
      try {
        code = JSON.parse(body).error?.code ?? "none"
      } catch {}
      errorCodes[`${status} ${code}`] = (errorCodes[`${status} ${code}`] ?? 0) + 1
    }
  }
}

const timed = spec.durationS !== undefined
const started = performance.now()
const instance = autocannon({
  url: spec.url,
  connections: spec.connections,
  requests: [request],
  sampleInt: 100,
  setupClient: (client) => clients.push(client),
  ...(timed ? { duration: spec.durationS + 600 } : { amount: spec.amount })
}, (error, result) => {
  if (error) {
    console.error(error)
    process.exit(1)
  }
  console.log(JSON.stringify({
    sent: clients.reduce((n, c) => n + c.reqsMade, 0),
    responses: [...bins.values()].reduce((a, b) => a + b, 0),
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    durationMs: Math.max(0, lastResponse - started),
    histogram: [...bins].sort((a, b) => a[0] - b[0]),
    ...(spec.expectFound ? { found } : {}),
    ...(spec.countErrorCodes ? { errorCodes } : {})
  }))
})
instance.on("response", (_client, status, _bytes, responseTime) => {
  lastResponse = performance.now()
  const bin = Math.max(1, Math.ceil(responseTime * 100))
  bins.set(bin, (bins.get(bin) ?? 0) + 1)
  statuses[status] = (statuses[status] ?? 0) + 1
})
if (timed) {
  setTimeout(() => {
    // each client sends nothing more and is done once its request in flight is answered
    for (const client of clients) client.responseMax = Math.max(1, client.reqsMade)
  }, spec.durationS * 1000)
}
