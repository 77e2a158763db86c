/**
 * Module lookups in production: registry records (imported like `vda registry import` does) and
 * the optional per-module upstream.
 */
import * as Fs from "node:fs/promises"
import { createServer, type Server } from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Imports from "../../src/cli/Imports.js"
import { waitFor } from "../support/Processes.js"
import { expectShape, ModulesOperation } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

const fine = (plate: string, amount: number) => ({
  kind: "fine", plate, date: "2026-03-02", amount, status: "pending", authority: "Municipalidad de Rosario",
  reference: `R-${amount}`, description: "Exceso de velocidad", jurisdiction: "Santa Fe", dueDate: "2026-05-02",
  discountedAmount: amount / 2
})
const inspection = (plate: string) => ({
  kind: "vtv", plate, type: "VTV", date: "2025-09-10", sticker: "OB123", inspectionType: "inspection", detail: null,
  result: "approved", certificate: "C-1", jurisdiction: "Santa Fe", facility: "Planta Norte", dueDate: "2026-09-10"
})

/** `vda registry import`'s import, reading the file from the local file system. */
const importRegistry = (file: string) => Imports.importRegistry(file).pipe(Effect.provide(NodeFileSystem.layer))

let dir: string
let app: TestApp
let account: TestAccount

const create = (target: TestApp, who: TestAccount, plate: string, modules: Array<string>) =>
  target.production(`/v2/vehicles/${plate}/modules`, withKey(who.production.key, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ modules })
  }))

const finished = (target: TestApp, who: TestAccount, id: string) =>
  waitFor(async () => {
    const body = await json(await target.production(`/v2/operations/${id}`, withKey(who.production.key)))
    return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
  }, "the operation to finish")

beforeAll(async () => {
  dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-modules-"))
  app = await makeTestApp({ config: { SOURCE_RETRY_INITIAL_MS: "10" } })
  account = await app.createAccount()
  const file = Path.join(dir, "registry.jsonl")
  await Fs.writeFile(file, [fine("AC555DE", 50000), fine("AC555DE", 12500.5), inspection("AC555DE")].map((l) => JSON.stringify(l)).join("\n"))
  const counts = await app.run(importRegistry(file))
  expect(counts).toEqual({ vehicles: 0, moduleRecords: 3 })
})

afterAll(async () => {
  await app.dispose()
  await Fs.rm(dir, { recursive: true, force: true })
})

describe("registry module records", () => {
  it("answer the modules of a plate; a module without records completes with total 0", async () => {
    const { id } = await json(await create(app, account, "AC555DE", ["fines", "vtv", "tax_debt", "gnc"]))
    const done = await finished(app, account, id)
    expectShape(done, ModulesOperation)
    expect(done.status).toBe("completed")
    expect(done.modules.fines.data).toMatchObject({ total: 2, amountTotal: 62500.5, currency: "ARS" })
    expect(done.modules.fines.data.items[0]).toEqual({
      date: "2026-03-02", amount: 50000, status: "pending", authority: "Municipalidad de Rosario", reference: "R-50000",
      description: "Exceso de velocidad", jurisdiction: "Santa Fe", dueDate: "2026-05-02", discountedAmount: 25000
    })
    expect(done.modules.vtv.data.total).toBe(1)
    expect(done.modules.tax_debt.data).toEqual({ total: 0, amountTotal: 0, currency: "ARS", items: [] })
    expect(done.modules.gnc.data).toEqual({ total: 0, items: [] })
  })

  it("a new import replaces the records of the plates and modules it covers", async () => {
    const file = Path.join(dir, "update.jsonl")
    await Fs.writeFile(file, JSON.stringify(fine("AC555DE", 1000)))
    await app.run(importRegistry(file))
    const { id } = await json(await create(app, account, "AC555DE", ["fines", "vtv"]))
    const done = await finished(app, account, id)
    expect(done.modules.fines.data.total).toBe(1)
    expect(done.modules.vtv.data.total).toBe(1) // not in the new file: kept
  })
})

describe("module upstream", () => {
  let server: Server
  let upstream: TestApp
  let client: TestAccount
  const stub = { status: 200, body: {} as unknown, calls: 0 }

  beforeAll(async () => {
    server = createServer((_req, res) => {
      stub.calls++
      res.writeHead(stub.status, { "content-type": "application/json" })
      res.end(JSON.stringify(stub.body))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address ? address.port : 0
    upstream = await makeTestApp({ config: { FINES_UPSTREAM_URL: `http://127.0.0.1:${port}/fines`, SOURCE_RETRY_INITIAL_MS: "10" } })
    client = await upstream.createAccount()
  })

  afterAll(async () => {
    await upstream.dispose()
    await new Promise((resolve) => server.close(resolve))
  })

  it("reduced coverage makes the module and the operation partial", async () => {
    const { plate: _p, kind: _k, ...item } = fine("AD111EF", 3000)
    Object.assign(stub, { status: 200, body: { items: [item], coverage: "reduced" }, calls: 0 })
    const { id } = await json(await create(upstream, client, "AD123EF", ["fines", "vtv"]))
    const done = await finished(upstream, client, id)
    expect(done.status).toBe("partial")
    expect(done.modules.fines).toMatchObject({
      status: "partial",
      data: { total: 1 },
      warnings: [{ code: "reduced_coverage", message: expect.any(String) }]
    })
    expect(done.modules.vtv.status).toBe("completed") // no upstream for vtv: the registry
  })

  it("a failing upstream is retried, then the module fails retryable; a refusal is not retried", async () => {
    Object.assign(stub, { status: 503, body: {}, calls: 0 })
    const down = await finished(upstream, client, (await json(await create(upstream, client, "AD124EF", ["fines"]))).id)
    expect(down.status).toBe("failed")
    expect(down.modules.fines.error).toMatchObject({ code: "module_unavailable", retryable: true })
    expect(stub.calls).toBe(3)
    Object.assign(stub, { status: 400, body: {}, calls: 0 })
    const refused = await finished(upstream, client, (await json(await create(upstream, client, "AD125EF", ["fines"]))).id)
    expect(refused.modules.fines.error).toMatchObject({ retryable: false })
    expect(stub.calls).toBe(1)
  })
})
