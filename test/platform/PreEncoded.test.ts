/**
 * The answers sent without their schema's encoding pass (`preEncoded`) are the JSON the schema's
 * encoding would have sent: checked on values drawn from each such schema (Effect's `Arbitrary`, with
 * fast-check), and every schema `src/` sends that way is one of them.
 */
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { StatusResponse } from "../../src/accounts/Api.js"
import { UsageResponse } from "../../src/metering/Api.js"
import { Operation } from "../../src/operations/Api.js"
import { VehicleResponse } from "../../src/vehicles/Response.js"
import { AcceptedVehicleOperation } from "../../src/vehicles/SearchOperation.js"
import { V1ReportResponse } from "../../src/v1/Api.js"
import { preEncodedPerObject } from "../../src/platform/http/PreEncoded.js"
import { fromSchema } from "../support/SchemaArbitrary.js"
import { readSource, sourceFiles } from "../support/SourceFiles.js"

const SCHEMAS: Record<string, Schema.Top> = {
  VehicleResponse,
  AcceptedVehicleOperation,
  StatusResponse,
  UsageResponse,
  Operation,
  V1ReportResponse
}


/** A value written as JSON, its object keys sorted: two documents that differ only in key order compare equal. */
const canonicalJson = (u: unknown) => {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : typeof v === "object" && v !== null
      ? Object.keys(v).sort().map((key) => [key, sorted((v as Record<string, unknown>)[key])])
      : v
  return JSON.stringify(sorted(JSON.parse(JSON.stringify(u))))
}

/**
 * Whether a value holds a `__proto__` key: the schema's encoding of a record drops it (it sets the
 * copy's prototype), JSON keeps it. The records sent (a query's `debug`) have keys of their own.
 */
const hasProtoKey = (u: unknown): boolean =>
  typeof u === "object" && u !== null &&
  (Object.hasOwn(u, "__proto__") || Object.values(u).some(hasProtoKey))

/** Whether `schema`'s values, written as JSON, are the JSON of their encoding. */
const sameJson = (schema: Schema.Top) => {
  const encode = Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>)
  return fc.property(fromSchema(schema), (value) => {
    fc.pre(!hasProtoKey(value))
    expect(canonicalJson(value)).toBe(canonicalJson(encode(value)))
  })
}

describe("pre-encoded answers", () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: the same JSON as the schema's encoding (its keys perhaps in another order)`, () => {
      fc.assert(sameJson(schema), { numRuns: 300 })
    })
  }

  it("a schema whose encoding transforms its values is told apart", () => {
    const transforming = Schema.Struct({ count: Schema.NumberFromString, at: Schema.Date })
    expect(fc.check(sameJson(transforming), { numRuns: 100 }).failed).toBe(true)
  })

  it("every schema sent that way is checked here", () => {
    const sent = new Set<string>()
    for (const file of sourceFiles("src").filter((file) => !file.endsWith("/PreEncoded.ts"))) {
      for (const match of readSource(file).matchAll(/\bpreEncoded(?:PerObject)?\((\w+),/g)) sent.add(match[1]!)
    }
    expect(sent).toContain("StatusResponse")
    expect([...sent].filter((name) => !(name in SCHEMAS))).toEqual([])
  })

  it("once per object: requests sharing a read share its answer; another read is encoded anew", async () => {
    let encoded = 0
    const answer = preEncodedPerObject(Operation, (operation: typeof Operation.Type) => (encoded++, operation))
    const [first, second] = fc.sample(fromSchema(Operation), 2)
    expect(answer(first!)).toBe(answer(first!))
    expect(encoded).toBe(1)
    const other = answer(second!)
    expect(encoded).toBe(2)
    expect(other).not.toBe(answer(first!))
    const body = (other as unknown as { body: { body: Uint8Array } }).body.body
    expect(JSON.parse(new TextDecoder().decode(body))).toEqual(JSON.parse(JSON.stringify(second)))
  })
})
