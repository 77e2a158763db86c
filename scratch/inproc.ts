import { HttpApiBuilder, HttpApp } from "@effect/platform"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Accounts } from "../src/accounts/Accounts.js"
import { HttpStackLive, withEnvironment } from "../src/Http.js"
import { AppConfig } from "../src/platform/Config.js"
import { pgClientLayer } from "../src/platform/Database.js"

const main = async () => {
  const url = process.env.DB!
  const layer = Layer.mergeAll(HttpStackLive, Accounts.Default).pipe(
    Layer.provide(pgClientLayer(Redacted.make(url), 10)),
    Layer.provide(AppConfig.Default.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))))
  )
  const runtime = ManagedRuntime.make(layer)
  const app = await runtime.runPromise(HttpApiBuilder.httpApp)
  const handler = HttpApp.toWebHandlerRuntime(await runtime.runtime())(withEnvironment("production")(app))
  const key = process.env.KEY!
  const run = async (path: string, headers: Record<string, string>, total: number, concurrency: number) => {
    let done = 0, ok = 0
    const t0 = performance.now()
    const cpu0 = process.cpuUsage()
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (done < total) { done++; const r = await handler(new Request(`http://x${path}`, { headers })); if (r.status === 200) ok++; await r.arrayBuffer() }
    }))
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    console.log(path.padEnd(30), `${(total / ms * 1000).toFixed(0)} req/s`, `cpu/req ${((cpu.user + cpu.system) / total).toFixed(0)}µs`, `ok ${ok}`)
  }
  for (let round = 0; round < 3; round++) {
    await run("/healthz", {}, 5000, 50)
    await run("/v2/vehicles/AE725VQ", { "x-api-key": key }, 5000, 50)
    await run("/v2/usage", { "x-api-key": key }, 3000, 50)
  }
  await runtime.dispose()
}
main()
