/**
 * The `vda` contract, through the real executable: outputs, `--json`, exit codes.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { runVda } from "../support/Processes.js"

let env: Record<string, string>
const vda = (...args: Array<string>) => runVda(args, env)
const vdaJson = async (...args: Array<string>) => {
  const result = await vda(...args, "--json")
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return JSON.parse(result.stdout)
}

beforeAll(async () => {
  env = { DATABASE_URL: await freshDatabase() }
})

describe("vda accounts", () => {
  it("create --json prints exactly {id, owner, plan, timezone}", async () => {
    const account = await vdaJson("accounts", "create", "--owner", "Flota Sur", "--plan", "scale", "--timezone", "America/Argentina/Cordoba")
    expect(account).toEqual({
      id: expect.stringMatching(/^acct_[0-9A-Z]{26}$/),
      owner: "Flota Sur",
      plan: "scale",
      timezone: "America/Argentina/Cordoba"
    })
    const defaults = await vdaJson("accounts", "create", "--owner", "Defaults")
    expect(defaults).toMatchObject({ plan: "free", timezone: "America/Argentina/Buenos_Aires" })
  })

  it("set-plan and set-custom change the plan and its terms", async () => {
    const { id } = await vdaJson("accounts", "create", "--owner", "Custom Co")
    const setPlan = await vda("accounts", "set-plan", id, "growth")
    expect(setPlan.code).toBe(0)
    expect(setPlan.stdout).toContain("plan=growth")
    const custom = await vda("accounts", "set-custom", id, "--plate-queries", "unlimited", "--module-queries", "800",
      "--unique-plates", "40", "--rpm", "unlimited", "--module-price-ars", "700", "--included-modules", "5",
      "--modules", "fines,gnc")
    expect(custom.code).toBe(0)
    expect(custom.stdout).toContain("plan=custom")
    expect(custom.stdout).toContain("plate queries/month unlimited, module queries/month 800, unique plates/day 40, requests/minute unlimited, modules fines,gnc, module price ARS 700, included modules 5")
    // terms not given are kept
    const again = await vda("accounts", "set-custom", id, "--rpm", "90")
    expect(again.stdout).toContain("module queries/month 800, unique plates/day 40, requests/minute 90, modules fines,gnc, module price ARS 700")
  })

  it("rejects bad arguments with exit code 2 and a message on stderr", async () => {
    const { id } = await vdaJson("accounts", "create", "--owner", "Args")
    const cases = await Promise.all([
      vda("accounts", "create", "--owner", "X", "--plan", "platinum"),
      vda("accounts", "create", "--owner", "X", "--timezone", "Mars/Olympus"),
      vda("accounts", "create"),
      vda("accounts", "create", "--owner", "  "),
      vda("accounts", "set-plan", id, "gold"),
      vda("accounts", "set-custom", id, "--rpm", "-3"),
      vda("accounts", "set-custom", id, "--modules", "fines,radar"),
      vda("accounts", "explode"),
      vda("keys", "create", "--account", id, "--environment", "staging")
    ])
    for (const result of cases) {
      expect(result.code).toBe(2)
      expect(result.stderr.trim().length).toBeGreaterThan(0)
      expect(result.stdout).toBe("")
    }
    expect(cases[1]!.stderr).toContain("Mars/Olympus")
    expect(cases[5]!.stderr).toContain("--rpm")
    expect(cases[6]!.stderr).toContain("radar")
  })

  it("unknown ids exit with code 1", async () => {
    const cases = await Promise.all([
      vda("accounts", "set-plan", "acct_missing", "growth"),
      vda("accounts", "set-custom", "acct_missing", "--rpm", "10"),
      vda("keys", "create", "--account", "acct_missing", "--environment", "production"),
      vda("keys", "list", "--account", "acct_missing"),
      vda("keys", "revoke", "key_missing")
    ])
    for (const result of cases) {
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/unknown (account acct_missing|key key_missing)/)
    }
  })
})

describe("vda keys", () => {
  it("create --json shows the secret once; list never shows it; revoke marks it revoked", async () => {
    const { id: accountId } = await vdaJson("accounts", "create", "--owner", "Keys")
    const live = await vdaJson("keys", "create", "--account", accountId, "--environment", "production", "--name", "backend")
    expect(live).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Z]{26}$/),
      key: expect.stringMatching(/^vda_live_[0-9A-Za-z]{32}$/),
      environment: "production",
      prefix: live.key.slice(0, 13),
      last4: live.key.slice(-4)
    })
    const test = await vdaJson("keys", "create", "--account", accountId, "--environment", "sandbox")
    expect(test.key).toMatch(/^vda_test_[0-9A-Za-z]{32}$/)

    const listed = await vda("keys", "list", "--account", accountId, "--json")
    expect(listed.stdout).not.toContain(live.key)
    expect(listed.stdout).not.toContain(test.key)
    const { keys } = JSON.parse(listed.stdout)
    expect(keys.map((k: { id: string; status: string; name: string | null }) => [k.id, k.status, k.name]))
      .toEqual([[live.id, "active", "backend"], [test.id, "active", null]])

    const revoked = await vda("keys", "revoke", live.id)
    expect(revoked.code).toBe(0)
    const after = await vdaJson("keys", "list", "--account", accountId)
    expect(after.keys[0]).toMatchObject({ id: live.id, status: "revoked", revokedAt: expect.any(String) })

    const human = await vda("keys", "list", "--account", accountId)
    expect(human.stdout).toContain(`${live.prefix}…${live.last4}`)
    expect(human.stdout).not.toContain(live.key)
  })
})

describe("vda console link", () => {
  it("prints a one-time link to the environment's console (on PUBLIC_URL), expiring in 15 minutes", async () => {
    const { id } = await vdaJson("accounts", "create", "--owner", "Consola SA")
    const before = Date.now()
    const link = await runVda(["console", "link", "--account", id, "--environment", "sandbox", "--json"], { ...env, SANDBOX_PUBLIC_URL: "https://sandbox.example.com/" })
    expect(link.code, link.stderr).toBe(0)
    const printed = JSON.parse(link.stdout)
    expect(printed).toEqual({ url: expect.stringMatching(/^https:\/\/sandbox\.example\.com\/console\/sign-in\/[0-9A-Za-z]{43}$/), environment: "sandbox", expiresAt: expect.any(String) })
    const ttl = Date.parse(printed.expiresAt) - before
    expect(ttl).toBeGreaterThan(14.9 * 60_000)
    expect(ttl).toBeLessThanOrEqual(15 * 60_000 + 5_000)

    const human = await vda("console", "link", "--account", id)
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^http:\/\/localhost:8080\/console\/sign-in\/[0-9A-Za-z]{43}\nOne-time production console sign-in link; it expires at /)
  })

  it("an unknown account exits with code 1 and issues nothing; a bad environment with code 2", async () => {
    const unknown = await vda("console", "link", "--account", "acct_nope")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("unknown account acct_nope")
    expect(unknown.stdout).toBe("")
    const { id } = await vdaJson("accounts", "create", "--owner", "Otro")
    const bad = await vda("console", "link", "--account", id, "--environment", "staging")
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe("")
  })
})

describe("vda plates hash", () => {
  it("prints the plate's hash under PLATE_HASH_SALT, the same for any case, and another under another salt", async () => {
    const { plateHash } = await import("../../src/platform/ids/PlateHash.js")
    const { Redacted } = await import("effect")
    const salted = { ...env, PLATE_HASH_SALT: "cli-test-salt" }
    const upper = await runVda(["plates", "hash", "AB123CD", "--json"], salted)
    const lower = await runVda(["plates", "hash", "ab123cd", "--json"], salted)
    expect(upper.code).toBe(0)
    expect(JSON.parse(upper.stdout)).toEqual({ plateHash: plateHash(Redacted.make("cli-test-salt"), "AB123CD") })
    expect(JSON.parse(upper.stdout)).toEqual(JSON.parse(lower.stdout))
    expect(JSON.parse(upper.stdout).plateHash).toMatch(/^[0-9a-f]{20}$/)
    const other = await runVda(["plates", "hash", "AB123CD", "--json"], { ...env, PLATE_HASH_SALT: "another-salt" })
    expect(JSON.parse(other.stdout).plateHash).not.toBe(JSON.parse(upper.stdout).plateHash)
  })

  it("refuses what is not a plate with exit code 2", async () => {
    const result = await vda("plates", "hash", "AB-123")
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("is not a plate")
  })
})

describe("vda plates hash without a salt, on DATABASE_URL", () => {
  it("refuses with exit code 1 and the one line that names PLATE_HASH_SALT and how to make it", async () => {
    const result = await vda("plates", "hash", "AB123CD")
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(
      "vda: PLATE_HASH_SALT is not set: `vda plates hash` with DATABASE_URL needs PLATE_HASH_SALT (make them with `npx vda temporal secrets` and keep them stable), " +
        "or TEMPORAL_PAYLOADS=clear to send workflow payloads in clear on purpose\n"
    )
  })
})

describe("vda temporal", () => {
  it("secrets prints three fresh environment lines: a usable key ring, a salt and a token, new each time", async () => {
    const { parseKeyRing } = await import("../../src/platform/temporal/TemporalCodec.js")
    const read = async () => {
      const result = await vda("temporal", "secrets")
      expect(result.code).toBe(0)
      return Object.fromEntries(result.stdout.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]))
    }
    const first = await read()
    expect(Object.keys(first)).toEqual(["TEMPORAL_CODEC_KEYS", "PLATE_HASH_SALT", "CODEC_SERVER_TOKEN"])
    expect(parseKeyRing(first.TEMPORAL_CODEC_KEYS!).current.key).toHaveLength(32)
    for (const name of ["PLATE_HASH_SALT", "CODEC_SERVER_TOKEN"]) expect(first[name]).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const second = await read()
    for (const name of Object.keys(first)) expect(second[name]).not.toBe(first[name])
  })

  it("codec-endpoint prints the worker's endpoint with its token, as the Temporal UI calls it", async () => {
    const result = await runVda(["temporal", "codec-endpoint"], { ...env, TEMPORAL_CODEC_KEYS: `k:${Buffer.alloc(32).toString("base64")}`, PLATE_HASH_SALT: "s", CODEC_SERVER_TOKEN: "tok-123", CODEC_SERVER_PORT: "9999" })
    expect(result).toMatchObject({ code: 0, stdout: "http://127.0.0.1:9999/tok-123\n" })
  })
})
