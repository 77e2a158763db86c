/**
 * Schema-driven fuzzing of the endpoints: requests generated from the contract's own schemas
 * (Effect Schema's Arbitrary, with fast-check), mixed with hostile values (NUL, lone surrogates,
 * case-folding letters, huge numbers, deep JSON, wrong content types, odd paths). For every
 * request: never a 500, every error in the contract's shape with nothing internal in it, and a
 * refused request consumes nothing. FUZZ_RUNS sets the number of runs per property
 * (`npm run fuzz` runs many more than the default).
 */
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ModulesRequest } from "../../src/operations/Api.js"
import { VehicleQueryParams } from "../../src/vehicles/Api.js"
import { WebhookConfigUpdate } from "../../src/webhooks/Api.js"
import { expectErrorBody } from "../support/ErrorShape.js"
import { fromSchema } from "../support/SchemaArbitrary.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

const RUNS = Number(process.env.FUZZ_RUNS ?? 60)
let app: TestApp
let account: TestAccount

beforeAll(async () => {
  app = await makeTestApp()
  account = await app.createAccount({ plan: "custom" })
  await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { requestsPerMinute: null })))
})
afterAll(() => app?.dispose())


/** Strings a careless or hostile client sends. */
const hostileString = fc.oneof(
  fc.constantFrom("", "\u0000", "a\u0000b", "\ud800", "\udfff", "ı", "ſ", "ﬁ", "ﬀ", "K", "ǅ", "💥", "%00", "../..", "null", "[]", "{}",
    "AB123CD\u0000", "ab123cd", "AB123C", " AB123CD", "x".repeat(5000)),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 20 })
)
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, true, false, null),
  fc.integer(),
  fc.array(hostileString, { maxLength: 6 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 4 })
)

/** Percent-encodes anything, lone surrogates included (as the invalid UTF-8 a client might send). */
const encodeSegment = (s: string) => {
  try {
    return encodeURIComponent(s)
  } catch {
    return "%ED%A0%80"
  }
}

const plateSegment = fc.oneof(
  fc.constantFrom("AB123CD", "abc123", "AB111CD", "AB222CD", "AB444CD", "AB404CD"),
  hostileString.map(encodeSegment)
)

/** What both environments have consumed so far. */
const usage = async () => {
  const sandbox = (await json(await app.sandbox("/v2/usage", withKey(account.sandbox.key)))).data
  const production = (await json(await app.production("/v2/usage", withKey(account.production.key)))).data
  return [sandbox, production].map((u) => [u.plateQueries.used, u.moduleQueries.used, u.uniquePlates.used])
}

/** Checks one answer against the contract's rules; returns whether it was refused. */
const checkAnswer = async (res: Response, label: string, method = "GET") => {
  // 503 is the contract's answer to a source outage (the sandbox's `unavailable` scenario); no other 5xx
  expect(res.status >= 500 && res.status !== 503, `${label}: ${res.status}`).toBe(false)
  if (method === "HEAD") return res.status >= 400 // a HEAD answer has no body to read
  const text = await res.text()
  if (res.status < 400) return false
  expectErrorBody(text, res.headers.get("x-request-id"), label)
  return true
}

/** Runs a property whose requests may be refused: refused ones must leave usage as it was. */
const fuzz = <A>(arbitrary: fc.Arbitrary<A>, send: (a: A) => Promise<{ res: Response; label: string; method?: string }>) =>
  fc.assert(
    fc.asyncProperty(arbitrary, async (input) => {
      const before = await usage()
      const { label, method, res } = await send(input)
      if (await checkAnswer(res, label, method)) {
        const after = await usage()
        expect(after, label).toEqual(before)
      }
    }),
    { numRuns: RUNS }
  )

describe("fuzzing the endpoints", () => {
  it("GET /v2/vehicles/{plate} with query parameters from the schema and hostile ones", async () => {
    const params = fc.oneof(
      // the query's wire form: the generated parameters, encoded as the contract encodes them
      fromSchema(VehicleQueryParams).map((p) =>
        Object.entries(Schema.encodeSync(VehicleQueryParams)(p)).map(([k, v]) => [k, String(v)] as [string, string])),
      fc.array(fc.tuple(fc.constantFrom("codia", "sheet", "tires", "classification", "debug", "onMiss", "sandbox_seed", "sandbox_scenario", "x"), hostileString), { maxLength: 4 })
    )
    await fuzz(fc.tuple(plateSegment, params), async ([plate, query]) => {
      const search = new URLSearchParams(query).toString()
      const path = `/v2/vehicles/${plate}${search ? `?${search}` : ""}`
      return { label: path, res: await app.sandbox(path, withKey(account.sandbox.key)) }
    })
  }, 120_000)

  it("POST /v2/vehicles/{plate}/modules with bodies from the schema and hostile ones", async () => {
    const body = fc.oneof(
      fromSchema(ModulesRequest).map((b) => JSON.stringify(b)),
      fc.record({ modules: fc.oneof(hostileValue, fc.array(fc.oneof(fc.constantFrom("fines", "vtv", "tax_debt", "gnc"), hostileString), { maxLength: 6 })), extra: hostileValue }, { requiredKeys: [] })
        .map((b) => JSON.stringify(b)),
      hostileString
    )
    const environment = fc.constantFrom("sandbox" as const, "production" as const)
    await fuzz(fc.tuple(plateSegment, body, environment), async ([plate, payload, env]) => {
      const call = env === "sandbox" ? app.sandbox : app.production
      const key = env === "sandbox" ? account.sandbox.key : account.production.key
      const res = await call(`/v2/vehicles/${plate}/modules`, withKey(key, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
        body: payload
      }))
      return { label: `${env} ${plate} ${payload.slice(0, 120)}`, res }
    })
  }, 120_000)

  it("PATCH /v2/webhooks/config with bodies from the schema and hostile ones", async () => {
    const body = fc.oneof(
      fromSchema(WebhookConfigUpdate).map((b) => JSON.stringify(b)),
      fc.record({ url: hostileValue, enabled: hostileValue, rotateSecret: hostileValue }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
      hostileString.map((s) => JSON.stringify({ url: `https://hooks.example.com/${s}` }))
    )
    await fuzz(body, async (payload) => ({
      label: payload.slice(0, 120),
      res: await app.sandbox("/v2/webhooks/config", withKey(account.sandbox.key, {
        method: "PATCH",
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
        body: payload
      }))
    }))
  }, 120_000)

  it("any method on any path, with hostile segments and keys", async () => {
    const path = fc.oneof(
      fc.constantFrom("/v2/usage", "/v2/status", "/v2/plans", "/v2/webhooks/deliveries", "/v2/webhooks/test", "/v2/operations/op_x", "/healthz", "/readyz"),
      fc.tuple(fc.constantFrom("/v2/operations/", "/v2/webhooks/deliveries?limit=", "/v2/webhooks/deliveries?offset=", "/v2/", "/"), hostileString)
        .map(([prefix, s]) => `${prefix}${encodeSegment(s)}`)
    )
    const method = fc.constantFrom("GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS")
    const key = fc.oneof(fc.constant(account.sandbox.key), fc.constant(account.production.key), hostileString.filter((s) => /^[\x20-\x7e]*$/.test(s)))
    await fuzz(fc.tuple(method, path, key), async ([m, p, k]) => ({
      label: `${m} ${p}`,
      method: m,
      res: await app.sandbox(p, { method: m, headers: { "x-api-key": k } })
    }))
  }, 120_000)
})
