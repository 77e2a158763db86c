/**
 * Traces leave the real server process over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set:
 * a stand-in collector receives the request spans (JSON, as the HTTP exporter sends them) under
 * the service's name, named by route template, with their status.
 */
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, expect, it } from "vitest"
import { stopCluster } from "../../src/platform/db/EmbeddedPostgres.js"
import { startServer, waitFor } from "../support/Processes.js"

interface ExportedSpan {
  readonly service: string
  readonly name: string
  readonly attributes: Record<string, unknown>
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number }
interface KeyValue { key: string; value: AnyValue }
interface Export {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<KeyValue> }
    scopeSpans?: Array<{ spans?: Array<{ name: string; attributes?: Array<KeyValue> }> }>
  }>
}

const valueOf = (value: AnyValue) =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue ?? value.doubleValue)

const attributesOf = (list: Array<KeyValue> = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]))

const received: Array<ExportedSpan> = []
const paths: Array<string> = []
const collector = Http.createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    paths.push(request.url ?? "")
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Export
    for (const resource of body.resourceSpans ?? []) {
      const service = String(attributesOf(resource.resource?.attributes)["service.name"])
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) received.push({ service, name: span.name, attributes: attributesOf(span.attributes) })
      }
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})

let dataDir: string | undefined

afterAll(async () => {
  collector.close()
  if (dataDir === undefined) return
  await stopCluster({ clusterDir: Path.join(dataDir, "postgres") }).catch(() => undefined)
  await Fs.rm(dataDir, { recursive: true, force: true })
})

it("exports the request spans over OTLP/HTTP to the configured endpoint", async () => {
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-export-"))
  await Fs.chmod(dataDir, 0o755)
  const server = await startServer({
    DATA_DIR: dataDir,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    // the batch goes out a tenth of a second after its first span
    OTEL_BSP_SCHEDULE_DELAY: "100"
  })
  expect((await fetch(`${server.productionUrl}/healthz`)).status).toBe(200)
  expect((await fetch(`${server.productionUrl}/v2/vehicles/AB123CD`)).status).toBe(401)

  const spans = await waitFor(
    () => (received.some((span) => span.name === "GET /v2/vehicles/{plate}") ? received : undefined),
    "the request spans to reach the collector",
    15_000
  )
  expect(paths.every((path) => path === "/v1/traces")).toBe(true)
  expect(spans.find((span) => span.name === "GET /healthz")).toMatchObject({
    service: "vehicle-data-api",
    attributes: { "http.route": "/healthz", "http.response.status_code": 200, "vda.environment": "production" }
  })
  expect(spans.find((span) => span.name === "GET /v2/vehicles/{plate}")?.attributes).toMatchObject({
    "http.response.status_code": 401
  })
  expect(JSON.stringify(spans)).not.toContain("AB123CD")
  expect(await server.stop("SIGTERM")).toBe(0)
}, 60_000)
