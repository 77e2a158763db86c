/**
 * The console's doors, over real listeners without a browser: one-time links (expired, reused,
 * unknown, for the other environment), the session cookie's attributes, sign-out, the CSRF check
 * on every form, the sign-in throttle, and what each refusal leaves unchanged.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ConsoleSessions } from "../../src/console/Sessions.js"
import type { Environment } from "../../src/platform/http/RequestContext.js"
import { ManualClock } from "../support/ManualClock.js"
import { adminQuery } from "../support/Postgres.js"
import { makeTestApp, type TestAccount, type TestApp } from "../support/TestApp.js"

let app: TestApp
let account: TestAccount
let urls: { production: string; sandbox: string }

beforeAll(async () => {
  app = await makeTestApp()
  urls = await app.listen()
  account = await app.createAccount({ plan: "growth", owner: "Ana Integrator" })
})

afterAll(() => app?.dispose())

const issueLink = (environment: Environment, accountId = account.id) =>
  app.run(Effect.flatMap(ConsoleSessions, (sessions) => sessions.issueLink({ accountId, environment, signsInAs: "ana@example.com" })).pipe(
    Effect.provide(ConsoleSessions.layer)
  ))

/** The token of a link, and the listener it belongs to. */
const tokenOf = (url: string) => url.split("/console/sign-in/")[1]!

const submit = (base: string, token: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ token })
  })

const cookieOf = (res: Response) => res.headers.get("set-cookie")?.split(";")[0] ?? ""

const signIn = async (environment: Environment) => {
  const base = urls[environment]
  const res = await submit(base, tokenOf((await issueLink(environment)).url))
  expect(res.status).toBe(303)
  return cookieOf(res)
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ""

const rows = async (url: string, text: string, values: ReadonlyArray<unknown> = []) => (await adminQuery(url, text, values)).rows

const count = async (table: string) => (await rows(app.databaseUrl, `select count(*)::int as n from ${table}`))[0].n as number

describe("sign-in links", () => {
  it("the link points at its environment's listener; opening it shows a form and uses nothing", async () => {
    const link = await issueLink("production")
    expect(link.url).toMatch(/^http:\/\/localhost:\d+\/console\/sign-in\/[0-9A-Za-z]{43}$/)
    expect(link.expiresAt.getTime() - Date.now()).toBeGreaterThan(14 * 60_000)
    const page = await fetch(`${urls.production}/console/sign-in/${tokenOf(link.url)}`)
    expect(page.status).toBe(200)
    const body = await page.text()
    expect(body).toContain("ana@example.com")
    expect(body).toContain("<form method=\"post\" action=\"/console/sign-in\">")
    const [row] = await rows(app.databaseUrl, "select used_at from console_links where expires_at = $1", [link.expiresAt])
    expect(row.used_at).toBeNull()
  })

  it("submitting it starts a session: an HttpOnly, SameSite=Strict cookie for this environment, then the overview", async () => {
    const res = await submit(urls.production, tokenOf((await issueLink("production")).url))
    expect(res.status).toBe(303)
    expect(res.headers.get("location")).toBe("/console")
    const cookie = res.headers.get("set-cookie")!
    expect(cookie).toMatch(/^vda_console_production=[0-9A-Za-z]{43}; /)
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toContain("SameSite=Strict")
    expect(cookie).toContain("Path=/console")
    expect(cookie).not.toContain("Secure") // plain HTTP here; Secure behind TLS (below)
    const overview = await fetch(`${urls.production}/console`, { headers: { cookie: cookieOf(res) } })
    expect(overview.status).toBe(200)
    expect(overview.headers.get("cache-control")).toBe("no-store")
    expect(overview.headers.get("content-security-policy")).toContain("script-src 'self'")
    const page = await overview.text()
    expect(page).toContain("Production")
    expect(page).toContain("ana@example.com")
  })

  it("a used link is refused (410) and starts no second session", async () => {
    const token = tokenOf((await issueLink("production")).url)
    expect((await submit(urls.production, token)).status).toBe(303)
    const sessions = await count("console_sessions")
    const again = await submit(urls.production, token)
    expect(again.status).toBe(410)
    expect(again.headers.get("set-cookie")).toBeNull()
    expect(await again.text()).toContain("This sign-in link was already used")
    const reopened = await fetch(`${urls.production}/console/sign-in/${token}`)
    expect(reopened.status).toBe(410)
    expect(await count("console_sessions")).toBe(sessions)
  })

  it("an expired link is refused (410) and starts no session", async () => {
    const link = await issueLink("production")
    const token = tokenOf(link.url)
    await rows(app.databaseUrl, "update console_links set expires_at = now() - interval '1 second' where expires_at = $1", [link.expiresAt])
    const sessions = await count("console_sessions")
    const res = await submit(urls.production, token)
    expect(res.status).toBe(410)
    expect(await res.text()).toContain("This sign-in link has expired")
    expect((await fetch(`${urls.production}/console/sign-in/${token}`)).status).toBe(410)
    expect(await count("console_sessions")).toBe(sessions)
  })

  it("an unknown link is refused (404); a link works only on its own environment's console", async () => {
    const unknown = await submit(urls.production, "x".repeat(43))
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toContain("This sign-in link is not valid")

    const sandboxLink = tokenOf((await issueLink("sandbox")).url)
    const elsewhere = await submit(urls.production, sandboxLink)
    expect(elsewhere.status).toBe(404)
    expect(await elsewhere.text()).toContain("for the other environment")
    // still unused: it works where it belongs
    expect((await submit(urls.sandbox, sandboxLink)).status).toBe(303)
  })

  it("an API key never signs in: without a session every page is a 401 sign-in page", async () => {
    for (const path of ["/console", "/console/keys", "/console/webhooks", "/console/operations", "/console/activity"]) {
      const res = await fetch(`${urls.production}${path}`, { headers: { "x-api-key": account.production.key } })
      expect(res.status, path).toBe(401)
      expect(await res.text()).toContain("vda console link")
    }
  })
})

describe("sessions", () => {
  it("a production session means nothing to the sandbox console, and the reverse", async () => {
    const production = await signIn("production")
    const sandbox = await signIn("sandbox")
    // the right cookie under the other environment's name: still refused (the session is bound to its environment)
    const crossed = await fetch(`${urls.sandbox}/console`, { headers: { cookie: production.replace("vda_console_production", "vda_console_sandbox") } })
    expect(crossed.status).toBe(401)
    const sandboxPage = await fetch(`${urls.sandbox}/console`, { headers: { cookie: sandbox } })
    expect(sandboxPage.status).toBe(200)
    expect(await sandboxPage.text()).toContain("Sandbox")
  })

  it("sign-out ends the session (the same cookie is refused afterwards) and is audited", async () => {
    const cookie = await signIn("production")
    const page = await (await fetch(`${urls.production}/console`, { headers: { cookie } })).text()
    const out = await fetch(`${urls.production}/console/sign-out`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: csrfOf(page) })
    })
    expect(out.status).toBe(200)
    expect(out.headers.get("set-cookie")).toMatch(/^vda_console_production=; .*Expires=Thu, 01 Jan 1970/)
    expect((await fetch(`${urls.production}/console`, { headers: { cookie } })).status).toBe(401)
    const actions = await rows(app.databaseUrl, "select action from console_audit where account_id = $1 order by id", [account.id])
    expect(actions.map((row: { action: string }) => row.action)).toContain("session.sign_out")
  })

  it("an idle session expires", async () => {
    const cookie = await signIn("production")
    await rows(app.databaseUrl, "update console_sessions set last_seen_at = now() - interval '31 minutes' where ended_at is null")
    expect((await fetch(`${urls.production}/console`, { headers: { cookie } })).status).toBe(401)
  })

  it("a session past its absolute expiry ends, however active", async () => {
    const cookie = await signIn("production")
    await rows(app.databaseUrl, "update console_sessions set expires_at = now() - interval '1 second' where ended_at is null")
    expect((await fetch(`${urls.production}/console`, { headers: { cookie } })).status).toBe(401)
  })
})

describe("forms", () => {
  const createKey = (cookie: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${urls.production}/console/keys`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(body)
    })

  it("a form without the session's CSRF token, with another's, or from another site is refused (403) and changes nothing", async () => {
    const cookie = await signIn("production")
    const other = await signIn("production")
    const page = await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text()
    const otherCsrf = csrfOf(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie: other } })).text())
    const keys = await count("api_keys")
    for (
      const [body, headers] of [
        [{ name: "no token" }, {}],
        [{ name: "wrong token", csrf: "x".repeat(32) }, {}],
        [{ name: "another session's token", csrf: otherCsrf }, {}],
        [{ name: "cross-site", csrf: csrfOf(page) }, { origin: "https://attacker.example" }],
        [{ name: "cross-site fetch", csrf: csrfOf(page) }, { "sec-fetch-site": "cross-site" }]
      ] as const
    ) {
      const res = await createKey(cookie, body, headers)
      expect(res.status, body.name).toBe(403)
      expect(await res.text()).toContain("This form has expired")
    }
    expect(await count("api_keys")).toBe(keys)
    const accepted = await createKey(cookie, { name: "good", csrf: csrfOf(page) })
    expect(accepted.status).toBe(201)
    expect(await count("api_keys")).toBe(keys + 1)
  })

  it("a created key's secret is shown once and works against the API; revoking it makes the next call a 401", async () => {
    const cookie = await signIn("production")
    const csrf = csrfOf(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text())
    const created = await (await createKey(cookie, { name: "server <1>", csrf })).text()
    const secret = /id="created-secret" value="(vda_live_[0-9A-Za-z]{32})"/.exec(created)?.[1]
    expect(secret).toBeDefined()
    expect(created).toContain("server &lt;1&gt;")
    const listed = await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text()
    expect(listed).not.toContain(secret!)
    expect((await fetch(`${urls.production}/v2/usage`, { headers: { "x-api-key": secret! } })).status).toBe(200)

    const id = /data-key-id="(key_[0-9A-Z]{26})">\s*<th scope="row"[^>]*>server &lt;1&gt;/.exec(listed)?.[1]
    expect(id).toBeDefined()
    const revoked = await fetch(`${urls.production}/console/keys/${id}/revoke`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf })
    })
    expect(revoked.status).toBe(303)
    expect(revoked.headers.get("location")).toBe("/console/keys?done=key-revoked")
    expect((await fetch(`${urls.production}/v2/usage`, { headers: { "x-api-key": secret! } })).status).toBe(401)
  })

  it("another account's key cannot be renamed or revoked from this console (404, unchanged)", async () => {
    const cookie = await signIn("production")
    const csrf = csrfOf(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text())
    const stranger = await app.createAccount()
    for (const action of ["revoke", "rename"]) {
      const res = await fetch(`${urls.production}/console/keys/${stranger.production.id}/${action}`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, name: "mine now" })
      })
      expect(res.status, action).toBe(404)
      expect(await res.text()).toContain("There is no such key.")
    }
    const [row] = await rows(app.databaseUrl, "select name, revoked_at from api_keys where id = $1", [stranger.production.id])
    expect(row).toEqual({ name: "test", revoked_at: null })
    expect((await fetch(`${urls.production}/v2/usage`, { headers: { "x-api-key": stranger.production.key } })).status).toBe(200)
  })

  it("every action is in the audit: who, what, when, from which address", async () => {
    const cookie = await signIn("production")
    const csrf = csrfOf(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text())
    await createKey(cookie, { name: "audited", csrf })
    const [entry] = await rows(
      app.databaseUrl,
      "select actor, action, target, ip, at, session_id from console_audit where action = 'key.create' order by id desc limit 1"
    )
    expect(entry.actor).toBe("ana@example.com")
    expect(entry.target).toMatch(/^key_/)
    expect(entry.ip).toMatch(/127\.0\.0\.1/)
    expect(entry.session_id).toMatch(/^cses_/)
    expect(Date.now() - new Date(entry.at).getTime()).toBeLessThan(60_000)
    const activity = await (await fetch(`${urls.production}/console/activity`, { headers: { cookie } })).text()
    expect(activity).toContain("key.create")
    expect(activity).toContain(entry.target)
  })
})

describe("hostile and odd requests", () => {
  const post = (path: string, cookie: string, body: Record<string, string> | string, headers: Record<string, string> = {}) =>
    fetch(`${urls.production}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
      body: typeof body === "string" ? body : new URLSearchParams(body)
    })

  it("a sign-in form posted from another site is refused (403) and leaves the link unused (login CSRF)", async () => {
    const token = tokenOf((await issueLink("production")).url)
    for (const headers of [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://attacker.example" }]) {
      const res = await submit(urls.production, token, headers)
      expect(res.status, JSON.stringify(headers)).toBe(403)
      expect(res.headers.get("set-cookie")).toBeNull()
    }
    expect((await submit(urls.production, token, { "sec-fetch-site": "same-origin" })).status).toBe(303)
  })

  it("signing in again in the same browser ends the session it replaces", async () => {
    const first = await signIn("production")
    const again = await submit(urls.production, tokenOf((await issueLink("production")).url), { cookie: first })
    expect(again.status).toBe(303)
    const second = cookieOf(again)
    expect(second).not.toBe(first)
    expect((await fetch(`${urls.production}/console`, { headers: { cookie: first } })).status).toBe(401)
    expect((await fetch(`${urls.production}/console`, { headers: { cookie: second } })).status).toBe(200)
  })

  it("a form over 16 KiB is a 413 and changes nothing; another method on a page is a 405 with Allow; a URL with NUL or bad percent-encoding is a 400 page", async () => {
    const cookie = await signIn("production")
    const csrf = csrfOf(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text())
    const keys = await count("api_keys")
    const big = await post("/console/keys", cookie, { csrf, name: "x".repeat(20_000) })
    expect(big.status).toBe(413)
    expect(await big.text()).toContain("This form could not be read")
    expect(await count("api_keys")).toBe(keys)
    for (const [method, path, allow] of [["POST", "/console", "GET"], ["GET", "/console/sign-out", "POST"], ["DELETE", "/console/keys", "GET, POST"]] as const) {
      const res = await fetch(`${urls.production}${path}`, { method, headers: { cookie } })
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.get("allow")).toBe(allow)
      expect(await res.text()).toContain("This page cannot do that")
    }
    expect(await count("api_keys")).toBe(keys)
    for (const path of ["/console/operations/%00", "/console/operations?before=%00", "/console/keys?done=%E0%A4%A", "/console/sign-in/%00"]) {
      const res = await fetch(`${urls.production}${path}`, { headers: { cookie } })
      expect(res.status, path).toBe(400)
      expect(await res.text()).toContain("This address is not valid")
    }
  })

  it("another account's operation, delivery or cursor shows nothing of it", async () => {
    const cookie = await signIn("production")
    const csrf = csrfOf(await (await fetch(`${urls.production}/console/webhooks`, { headers: { cookie } })).text())
    const stranger = await app.createAccount()
    const theirs = await (await fetch(`${urls.production}/v2/vehicles/AB123CD/modules`, {
      method: "POST",
      headers: { "x-api-key": stranger.production.key, "content-type": "application/json" },
      body: JSON.stringify({ modules: ["fines"] })
    })).json() as { id: string }
    const detail = await fetch(`${urls.production}/console/operations/${theirs.id}`, { headers: { cookie } })
    expect(detail.status).toBe(404)
    expect(await detail.text()).not.toContain("AB123CD")
    const paged = await (await fetch(`${urls.production}/console/operations?before=${theirs.id}`, { headers: { cookie } })).text()
    expect(paged).toContain("No operations")

    const [test] = await rows(
      app.databaseUrl,
      `insert into webhook_deliveries (id, account_id, environment, api_version, event_type, body, status, next_attempt_at, created_at, updated_at)
       values (gen_random_uuid(), $1, 'production', 'v2', 'webhook.test', '{}', 'failed', now(), now(), now()) returning id::text as id`,
      [stranger.id]
    )
    const resend = await post(`/console/webhooks/deliveries/${test.id}/resend`, cookie, { csrf })
    expect(resend.status).toBe(404)
    expect(await resend.text()).toContain("There is no such delivery.")
    const [row] = await rows(app.databaseUrl, "select status, series from webhook_deliveries where id = $1", [test.id])
    expect(row).toEqual({ status: "failed", series: 1 })
  })

  it("a revoked key can be neither revoked again (404, audited once) nor renamed", async () => {
    const cookie = await signIn("production")
    const csrf = csrfOf(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text())
    const created = await (await post("/console/keys", cookie, { csrf, name: "once" })).text()
    const id = /data-key-id="(key_[0-9A-Z]{26})"/.exec(await (await fetch(`${urls.production}/console/keys`, { headers: { cookie } })).text())
    expect(created).toContain("created-secret")
    const keyId = (await rows(app.databaseUrl, "select id from api_keys where name = 'once' and account_id = $1", [account.id]))[0].id as string
    expect(id).not.toBeNull()
    expect((await post(`/console/keys/${keyId}/revoke`, cookie, { csrf })).status).toBe(303)
    expect((await post(`/console/keys/${keyId}/revoke`, cookie, { csrf })).status).toBe(404)
    expect((await post(`/console/keys/${keyId}/rename`, cookie, { csrf, name: "renamed" })).status).toBe(404)
    const audited = await rows(app.databaseUrl, "select count(*)::int as n from console_audit where action = 'key.revoke' and target = $1", [keyId])
    expect(audited[0].n).toBe(1)
    expect((await rows(app.databaseUrl, "select name from api_keys where id = $1", [keyId]))[0].name).toBe("once")
  })
})

describe("behind a proxy", () => {
  it("with TRUSTED_PROXY_HOPS the audit records the client from X-Forwarded-For and the cookie is Secure when the proxy saw TLS; without, both headers are ignored", async () => {
    const proxied = await makeTestApp({ config: { TRUSTED_PROXY_HOPS: "1", PUBLIC_URL: "https://api.example.com" } })
    try {
      const { production, sandbox } = await proxied.listen()
      const owner = await proxied.createAccount()
      const linkOf = (environment: Environment) =>
        proxied.run(Effect.flatMap(ConsoleSessions, (s) => s.issueLink({ accountId: owner.id, environment, signsInAs: "x" })).pipe(
          Effect.provide(ConsoleSessions.layer)
        ))
      const link = await linkOf("production")
      expect(link.url.startsWith("https://api.example.com/console/sign-in/")).toBe(true)
      const res = await submit(production, tokenOf(link.url), { "x-forwarded-for": "198.51.100.1, 203.0.113.7" })
      expect(res.status).toBe(303)
      expect(res.headers.get("set-cookie")).toContain("Secure")
      const [entry] = await rows(proxied.databaseUrl, "select ip from console_audit where action = 'session.sign_in'")
      expect(entry.ip).toBe("203.0.113.7")

      // the sandbox is published on http here: no Secure, unless the proxy says the client used TLS
      const plain = await submit(sandbox, tokenOf((await linkOf("sandbox")).url))
      expect(plain.headers.get("set-cookie")).not.toContain("Secure")
      const tls = await submit(sandbox, tokenOf((await linkOf("sandbox")).url), { "x-forwarded-proto": "https" })
      expect(tls.headers.get("set-cookie")).toContain("Secure")
    } finally {
      await proxied.dispose()
    }

    const spoofed = await submit(urls.production, tokenOf((await issueLink("production")).url), { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" })
    expect(spoofed.headers.get("set-cookie")).not.toContain("Secure")
    const [last] = await rows(app.databaseUrl, "select ip from console_audit where action = 'session.sign_in' order by id desc limit 1")
    expect(last.ip).not.toBe("203.0.113.9")
  })
})

describe("sign-in throttle", () => {
  it("good links never count; past the failures allowed per minute from one address every attempt is a 429 with Retry-After, the link unused; the next minute it works", async () => {
    const clock = new ManualClock(Date.parse("2026-11-25T12:00:30Z"))
    const throttled = await makeTestApp({ clock, config: { CONSOLE_SIGN_IN_FAILURES_PER_MINUTE: "3" } })
    try {
      const { production } = await throttled.listen()
      const owner = await throttled.createAccount()
      const issue = () =>
        throttled.run(Effect.flatMap(ConsoleSessions, (s) =>
          s.issueLink({ accountId: owner.id, environment: "production", signsInAs: "x" })).pipe(Effect.provide(ConsoleSessions.layer)))
      for (let i = 0; i < 5; i++) {
        const token = tokenOf((await issue()).url)
        expect((await fetch(`${production}/console/sign-in/${token}`)).status).toBe(200)
        expect((await submit(production, token)).status).toBe(303)
      }

      const statuses: Array<number> = []
      for (let i = 0; i < 3; i++) statuses.push((await submit(production, "y".repeat(43))).status)
      expect(statuses).toEqual([404, 404, 404])
      const link = await issue()
      const refused = await submit(production, tokenOf(link.url))
      expect(refused.status).toBe(429)
      expect(refused.headers.get("retry-after")).toBe("30")
      expect(refused.headers.get("set-cookie")).toBeNull()
      expect(await refused.text()).toContain("Too many sign-in attempts")
      expect((await fetch(`${production}/console/sign-in/${tokenOf(link.url)}`)).status).toBe(429)
      const [unused] = await rows(throttled.databaseUrl, "select count(*)::int as n from console_links where used_at is null")
      expect(unused.n).toBe(1)

      clock.advance("30 seconds")
      expect((await submit(production, tokenOf(link.url))).status).toBe(303)
    } finally {
      await throttled.dispose()
    }
  })
})
