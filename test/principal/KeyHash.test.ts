/**
 * An API key's header, checked and hashed: on every request (`keyHashOf`), or once per connection
 * while its client sends the same header (`keyHashOnConnection`).
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { keyHashOf, keyHashOnConnection } from "../../src/principal/Authentication.js"
import { KEY_PREFIX, KEY_SECRET_LENGTH } from "../../src/principal/Domain.js"
import { sha256Hex } from "../../src/platform/ids/Ids.js"

const KEY = `${KEY_PREFIX.production}${"a1B2".repeat(KEY_SECRET_LENGTH / 4)}`
const OTHER_KEY = `${KEY_PREFIX.sandbox}${"Z9y8".repeat(KEY_SECRET_LENGTH / 4)}`

const reasonOf = (result: Result.Result<string, { readonly reason: string }>) =>
  Result.isFailure(result) ? result.failure.reason : "hashed"

describe("keyHashOf", () => {
  it("hashes a well-formed key, trimmed; refuses no key as missing and anything else as unknown", () => {
    expect(keyHashOf(KEY)).toEqual(Result.succeed(sha256Hex(KEY)))
    expect(keyHashOf(` ${KEY} `)).toEqual(Result.succeed(sha256Hex(KEY)))
    expect([undefined, "", "  "].map((raw) => reasonOf(keyHashOf(raw)))).toEqual(["missing", "missing", "missing"])
    expect([`${KEY}x`, KEY.slice(0, -1), `vda_prod_${KEY.slice(9)}`].map((raw) => reasonOf(keyHashOf(raw))))
      .toEqual(["unknown", "unknown", "unknown"])
  })
})

describe("keyHashOnConnection", () => {
  it("answers what keyHashOf answers, for each header a connection sends in turn", () => {
    const connection = {}
    const headers = [KEY, KEY, "nonsense", undefined, ` ${KEY}`, OTHER_KEY, KEY, `${KEY}!`, KEY]
    expect(headers.map((raw) => keyHashOnConnection(connection, raw))).toEqual(headers.map(keyHashOf))
  })

  it("remembers a well-formed key's answer on its connection, and makes each refusal anew", () => {
    const connection = {}
    const first = keyHashOnConnection(connection, KEY)
    expect(keyHashOnConnection(connection, KEY)).toBe(first)
    const refused = keyHashOnConnection(connection, "nonsense")
    const refusedAgain = keyHashOnConnection(connection, "nonsense")
    expect(reasonOf(refused)).toBe("unknown")
    expect(refusedAgain).not.toBe(refused)
    expect(Result.isFailure(refused) && Result.isFailure(refusedAgain) && refusedAgain.failure !== refused.failure).toBe(true)
    // a refusal leaves the connection's key in place
    expect(keyHashOnConnection(connection, KEY)).toBe(first)
    // another connection, or none, has its own answer
    expect(keyHashOnConnection({}, KEY)).not.toBe(first)
    expect(keyHashOnConnection(undefined, KEY)).not.toBe(first)
  })
})
