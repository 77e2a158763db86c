/**
 * The same with the Promise client: query a plate, then run a module query and wait for its end.
 *
 *   VDA_BASE_URL  the API's address (the sandbox's, http://localhost:8081, with a vda_test_ key)
 *   VDA_API_KEY   an API key of that environment
 *   VDA_PLATE     the plate to look up (AB123CD unless given)
 */
import { makePromiseClient, VehicleDataApiError } from "vehicle-data-api/client"

const plate = process.env.VDA_PLATE ?? "AB123CD"
const api = makePromiseClient({ baseUrl: process.env.VDA_BASE_URL!, apiKey: process.env.VDA_API_KEY! })

try {
  const answer = await api.vehicles.getVehicle({ params: { plate } })
  if ("found" in answer && answer.data !== null) console.log(`${plate}: ${answer.data.make} ${answer.data.model} ${answer.data.year ?? ""}`)
  else console.log(`${plate}: not found`)

  const created = await api.operations.createModulesOperation({ params: { plate }, payload: { modules: ["fines", "vtv"] } })
  console.log(`operation ${created.id}: ${created.status}`)
  // the signal bounds the whole wait, polls and their retries included
  const operation = await api.waitForOperation(created.id, { deadline: "1 minute" }, { signal: AbortSignal.timeout(90_000) })
  console.log(`operation ${operation.id}: ${operation.status}`)
} catch (error) {
  if (!(error instanceof VehicleDataApiError)) throw error
  // quota_exceeded: error.details says which allowance, and error.details.resetAt when it resets
  console.error(`${error.code} (${error.status ?? "no answer"}): ${error.message} [request ${error.requestId ?? "-"}]`)
  process.exitCode = 1
}
