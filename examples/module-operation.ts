/**
 * Run a module query (a durable operation) with the Effect client and wait for its end.
 *
 *   VDA_BASE_URL  the API's address (the sandbox's, http://localhost:8081, with a vda_test_ key)
 *   VDA_API_KEY   an API key of that environment
 *   VDA_PLATE     the plate to look up (AB123CD unless given)
 */
import { Effect } from "effect"
import { VehicleDataClient } from "vehicle-data-api/client"

const plate = process.env.VDA_PLATE ?? "AB123CD"

const program = Effect.gen(function*() {
  const api = yield* VehicleDataClient
  // 202 for a new operation; 200 with the same one while an identical query is still running
  const created = yield* api.operations.createModulesOperation({ params: { plate }, payload: { modules: ["fines", "vtv"] } })
  console.log(`operation ${created.id}: ${created.status}`)
  const operation = yield* api.waitForOperation(created.id, { deadline: "1 minute" })
  console.log(`operation ${operation.id}: ${operation.status}`)
  if (operation.kind === "modules") {
    for (const [name, result] of Object.entries(operation.modules)) {
      if (result === undefined) continue
      console.log(`  ${name}: ${result.status}${result.error === null ? "" : ` (${result.error.code})`}`)
    }
  }
})

program.pipe(
  Effect.catchTag("VehicleDataApiError", (error) =>
    Effect.sync(() => {
      // deadline_exceeded: not final yet, poll the same id later; quota_exceeded: see error.details
      console.error(`${error.code} (${error.status ?? "no answer"}): ${error.message} [request ${error.requestId ?? "-"}]`)
      process.exitCode = 1
    })),
  Effect.provide(VehicleDataClient.layerFetch({ baseUrl: process.env.VDA_BASE_URL!, apiKey: process.env.VDA_API_KEY! })),
  Effect.runPromise
)
