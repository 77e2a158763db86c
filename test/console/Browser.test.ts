/**
 * The account console in a real headless Chromium, against the real server process: sign-in
 * links from the real `vda`, keys used against the API, a webhook delivered to a real HTTPS
 * endpoint on localhost and resent, the usage chart, CSRF, and the production/sandbox split.
 * Screenshots of every page at desktop and phone width go to test-results/console/.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, BrowserContext, Dialog, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newPage, screenshot, type Viewport } from "../support/Browser.js"
import { freshDatabase } from "../support/Postgres.js"
import { runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { makeTlsFixture, type Receiver, startReceiver, type TlsFixture, trustingReceiver } from "../support/WebhookReceiver.js"

type Env = "production" | "sandbox"

let tls: TlsFixture
let receiver: Receiver
let env: Record<string, string>
let server: ServerProcess
let browser: Browser
let accountId: string
let apiKey: Record<Env, string>
const contexts: Array<BrowserContext> = []

const urlOf = (environment: Env) => (environment === "production" ? server.productionUrl : server.sandboxUrl)

beforeAll(async () => {
  tls = await makeTlsFixture()
  receiver = await startReceiver(tls)
  env = {
    DATABASE_URL: await freshDatabase(),
    ...trustingReceiver(tls),
    WEBHOOK_RETRY_INITIAL_MS: "200",
    WEBHOOK_RETRY_COEFFICIENT: "2",
    WEBHOOK_RETRY_MAX_MS: "400",
    SANDBOX_MODULE_LATENCY_MS: "50",
    SOURCE_RETRY_INITIAL_MS: "20"
  }
  const account = JSON.parse((await runVda(["accounts", "create", "--owner", "ACME Seguros", "--plan", "growth", "--json"], env)).stdout)
  accountId = account.id
  apiKey = {} as Record<Env, string>
  for (const environment of ["production", "sandbox"] as const) {
    apiKey[environment] = JSON.parse((await runVda(["keys", "create", "--account", accountId, "--environment", environment, "--name", "backend", "--json"], env)).stdout).key
  }
  ;[server, browser] = await Promise.all([startServer(env), launchBrowser()])
}, 90_000)

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {})
  await browser?.close()
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  await receiver?.close()
  await tls?.dispose()
})

/** A one-time link from the real CLI, pointing at the running server's listener. */
const link = async (environment: Env, extraEnv: Record<string, string> = {}) => {
  const result = await runVda(["console", "link", "--account", accountId, "--environment", environment, "--as", "ana@example.com", "--json"], {
    ...env,
    PUBLIC_URL: server.productionUrl,
    SANDBOX_PUBLIC_URL: server.sandboxUrl,
    ...extraEnv
  })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout).url as string
}

const open = async (viewport: Viewport = "desktop") => {
  const page = await newPage(browser, viewport)
  contexts.push(page.context())
  page.on("dialog", (dialog: Dialog) => void dialog.accept())
  return page
}

/** A page signed in to `environment`'s console through a fresh link. */
const signedIn = async (environment: Env, page?: Page) => {
  const target = page ?? (await open())
  await target.goto(await link(environment))
  await target.getByRole("button", { name: "Sign in" }).click()
  await target.waitForURL(`${urlOf(environment)}/console`)
  return target
}

const api = (environment: Env, path: string, key: string, init: RequestInit = {}) =>
  fetch(`${urlOf(environment)}${path}`, { ...init, headers: { "x-api-key": key, "content-type": "application/json", ...init.headers } })

const heading = (page: Page) => page.getByRole("heading", { level: 1 }).textContent()

describe("signing in", () => {
  it("a link opens a confirmation, then a session on the overview; a reused link and an expired link are refused", async () => {
    const url = await link("production")
    const page = await open()
    const first = await page.goto(url)
    expect(first?.status()).toBe(200)
    expect(await heading(page)).toBe("Sign in to the console")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`${server.productionUrl}/console`)
    expect(await heading(page)).toBe("Overview")
    await expect(page.getByRole("note", { name: "Environment" }).textContent()).resolves.toContain("Production")
    expect(await page.evaluate("document.cookie")).toBe("") // HttpOnly: not readable by scripts

    const again = await open()
    const reused = await again.goto(url)
    expect(reused?.status()).toBe(410)
    expect(await heading(again)).toBe("This sign-in link was already used")

    const expired = await link("production", { CONSOLE_LINK_TTL_MS: "1" })
    const late = await open()
    const refused = await late.goto(expired)
    expect(refused?.status()).toBe(410)
    expect(await heading(late)).toBe("This sign-in link has expired")
    expect((await late.goto(`${server.productionUrl}/console`))?.status()).toBe(401)
  })
})

describe("API keys", () => {
  it("a key created in the console works against the API, and once revoked the next call is a 401", async () => {
    const page = await signedIn("production")
    await page.getByRole("link", { name: "API keys" }).click()
    await page.getByLabel("Name", { exact: true }).fill("billing server")
    await page.getByRole("button", { name: "Create key" }).click()
    expect(await heading(page)).toBe("New API key")
    const secret = await page.getByLabel("API key").inputValue()
    expect(secret).toMatch(/^vda_live_[0-9A-Za-z]{32}$/)
    expect((await api("production", "/v2/usage", secret)).status).toBe(200)

    await page.getByRole("link", { name: "Back to API keys" }).click()
    expect(await page.content()).not.toContain(secret)
    const row = page.getByRole("row").filter({ hasText: "billing server" })
    await expect(row.textContent()).resolves.toContain(`${secret.slice(0, 13)}…${secret.slice(-4)}`)
    await row.getByRole("button", { name: "Revoke billing server" }).click()
    await expect(page.getByRole("status").textContent()).resolves.toContain("The key was revoked")
    const refused = await api("production", "/v2/usage", secret)
    expect(refused.status).toBe(401)
    expect((await refused.json() as { error: { code: string } }).error.code).toBe("invalid_api_key")
  })
})

describe("usage", () => {
  it("the chart and its table show the queries just made, today", async () => {
    const page = await signedIn("production")
    const todayOf = async () => {
      const data = JSON.parse((await page.locator("#usage-data").textContent())!)
      return { plate: data.plateQueries.at(-1) as number, module: data.moduleQueries.at(-1) as number, days: data.labels.length as number }
    }
    const before = await todayOf()
    for (const plate of ["AB123CD", "AC456DE", "AD789EF"]) {
      expect((await api("production", `/v2/vehicles/${plate}`, apiKey.production)).status).toBe(200)
    }
    const modules = await api("production", "/v2/vehicles/AB123CD/modules", apiKey.production, { method: "POST", body: JSON.stringify({ modules: ["fines", "vtv"] }) })
    expect(modules.status).toBe(202)

    await page.reload()
    await page.locator("#usage-chart[data-ready='true'] canvas").first().waitFor()
    const after = await todayOf()
    expect(after).toEqual({ plate: before.plate + 3, module: before.module + 2, days: before.days })
    // one point per day of the month so far, in the account's timezone
    const dayOfMonth = Number(new Intl.DateTimeFormat("en-GB", { timeZone: "America/Argentina/Buenos_Aires", day: "numeric" }).format(new Date()))
    expect(after.days).toBe(dayOfMonth)
    await page.getByText("Daily numbers").click()
    const today = page.locator("table.daily tbody tr").first()
    await expect(today.locator("td").allTextContents()).resolves.toEqual([String(after.plate), String(after.module)])
    const plateRow = page.locator("tr[data-allowance='plateQueries'] .used")
    expect(Number((await plateRow.textContent())!.replace(/,/g, ""))).toBeGreaterThanOrEqual(after.plate)
  })
})

describe("webhooks", () => {
  const deliveriesRow = (page: Page, id: string) => page.locator(`tr[data-delivery-id="${id}"]`)

  const configure = async (page: Page, path: string) => {
    await page.goto(`${server.productionUrl}/console/webhooks`)
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}${path}`)
    await page.getByLabel("Send events to this URL").check()
    await page.getByRole("button", { name: "Save" }).click()
    await expect(page.getByRole("status").textContent()).resolves.toContain("saved")
  }

  /** Reloads the deliveries list until the delivery shows `status`. */
  const untilStatus = (page: Page, id: string, status: string) =>
    waitFor(async () => {
      await page.reload()
      return (await deliveriesRow(page, id).getAttribute("data-status")) === status ? true : undefined
    }, `delivery ${id} to be ${status}`, 20_000)

  it("a configured webhook's test event arrives at the HTTPS endpoint and shows delivered in the list", async () => {
    const page = await signedIn("production")
    await configure(page, "/console-hook")
    await page.getByRole("button", { name: "Send test event" }).click()
    await expect(page.getByRole("status").textContent()).resolves.toContain("webhook.test event is on its way")
    const [arrived] = await waitFor(() => (receiver.at("/console-hook").length > 0 ? receiver.at("/console-hook") : undefined), "the test event")
    const id = arrived!.headers["x-service-delivery"] as string
    expect(JSON.parse(arrived!.rawBody.toString()).type).toBe("webhook.test")
    await untilStatus(page, id, "processed")
    const cells = await deliveriesRow(page, id).locator("td").allTextContents()
    expect(cells.slice(0, 3)).toEqual(["Delivered", "1", "200"])
  })

  it("a failed delivery is resent: a new series of attempts with the same delivery and event id", async () => {
    const page = await signedIn("production")
    receiver.script("/flaky", [500])
    await configure(page, "/flaky")
    await page.getByRole("button", { name: "Send test event" }).click()
    await expect(page.getByRole("status").textContent()).resolves.toContain("webhook.test event is on its way")
    const first = await waitFor(() => receiver.at("/flaky")[0], "the first attempt")
    const id = first.headers["x-service-delivery"] as string
    await untilStatus(page, id, "failed")
    expect(receiver.at("/flaky")).toHaveLength(5)
    const failedCells = await deliveriesRow(page, id).locator("td").allTextContents()
    expect(failedCells.slice(0, 3)).toEqual(["Failed", "5", "500"])

    receiver.script("/flaky", [200])
    await deliveriesRow(page, id).getByRole("button", { name: `Resend delivery ${id}` }).click()
    await expect(page.getByRole("status").textContent()).resolves.toContain("sent again")
    await untilStatus(page, id, "processed")
    const resent = receiver.at("/flaky")
    expect(resent).toHaveLength(6)
    expect(resent[5]!.headers["x-service-delivery"]).toBe(id)
    expect(JSON.parse(resent[5]!.rawBody.toString()).id).toBe(JSON.parse(first.rawBody.toString()).id)
    const cells = await deliveriesRow(page, id).locator("td").allTextContents()
    expect(cells.slice(0, 3)).toEqual(["Delivered", "1", "200"])
  })
})

describe("CSRF", () => {
  it("a form with a forged token is refused with 403, and one posted from another site changes nothing", async () => {
    const page = await signedIn("production")
    await page.goto(`${server.productionUrl}/console/keys`)
    const keysBefore = await page.locator("tr[data-key-id]").count()
    await page.locator("form[action='/console/keys'] input[name='csrf']").evaluate((input: { value: string }) => void (input.value = "forged"))
    await page.getByLabel("Name", { exact: true }).fill("forged key")
    const [response] = await Promise.all([page.waitForResponse(`${server.productionUrl}/console/keys`), page.getByRole("button", { name: "Create key" }).click()])
    expect(response.status()).toBe(403)
    expect(await heading(page)).toBe("This form has expired")

    // another site's page that posts to the console on load, in the signed-in browser
    const attacker = Http.createServer((_request, res) => {
      res.writeHead(200, { "content-type": "text/html" }).end(
        `<form id="f" method="post" action="${server.productionUrl}/console/keys"><input name="name" value="cross-site"></form><script>document.getElementById("f").submit()</script>`
      )
    })
    await new Promise<void>((resolve) => attacker.listen(0, "localhost", resolve))
    try {
      const [posted] = await Promise.all([
        page.waitForResponse(`${server.productionUrl}/console/keys`),
        page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`)
      ])
      expect([401, 403]).toContain(posted.status())
    } finally {
      attacker.closeAllConnections()
      await new Promise<void>((resolve) => attacker.close(() => resolve()))
    }
    await page.goto(`${server.productionUrl}/console/keys`)
    expect(await page.locator("tr[data-key-id]").count()).toBe(keysBefore)
    expect(await page.content()).not.toContain("forged key")
    expect(await page.content()).not.toContain("cross-site")
  })
})

describe("production and sandbox", () => {
  it("each console shows its own environment's keys and data, in one browser, and a key made in one is refused by the other", async () => {
    const page = await signedIn("production")
    await signedIn("sandbox", page)
    expect(await page.getByRole("note", { name: "Environment" }).textContent()).toContain("Sandbox")
    await page.getByRole("link", { name: "API keys" }).click()
    const sandboxKeys = await page.locator("tr[data-key-id] code").allTextContents()
    expect(sandboxKeys.length).toBeGreaterThan(0)
    expect(sandboxKeys.every((key: string) => key.startsWith("vda_test_"))).toBe(true)
    await page.getByLabel("Name", { exact: true }).fill("sandbox tool")
    await page.getByRole("button", { name: "Create key" }).click()
    const secret = await page.getByLabel("API key").inputValue()
    expect(secret).toMatch(/^vda_test_/)
    expect((await api("sandbox", "/v2/usage", secret)).status).toBe(200)
    expect((await api("production", "/v2/usage", secret)).status).toBe(401)
    await screenshot(page, "sandbox-keys-desktop")

    // the production session is still there, beside the sandbox one, and shows only production keys
    await page.goto(`${server.productionUrl}/console/keys`)
    expect(await page.getByRole("note", { name: "Environment" }).textContent()).toContain("Production")
    const productionKeys = await page.locator("tr[data-key-id] code").allTextContents()
    expect(productionKeys.every((key: string) => key.startsWith("vda_live_"))).toBe(true)
    expect(await page.content()).not.toContain("sandbox tool")
  })
})

describe("pages", () => {
  it("operations: the list filters by status and the detail shows each module's result", async () => {
    const created = await (await api("sandbox", "/v2/vehicles/AB123CD/modules", apiKey.sandbox, { method: "POST", body: JSON.stringify({ modules: ["fines", "vtv"] }) })).json() as { id: string }
    await waitFor(async () => {
      const body = await (await api("sandbox", `/v2/operations/${created.id}`, apiKey.sandbox)).json() as { status: string }
      return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
    }, "the operation to finish")
    const page = await signedIn("sandbox")
    await page.getByRole("link", { name: "Operations" }).click()
    await page.getByLabel("Status").selectOption("completed")
    await page.getByRole("button", { name: "Filter" }).click()
    expect(page.url()).toContain("status=completed")
    await page.getByRole("link", { name: created.id }).click()
    expect(await heading(page)).toBe(`Operation ${created.id}`)
    for (const module of ["fines", "vtv"]) {
      const section = page.locator(`section[data-module="${module}"]`)
      await expect(section.locator("pre").textContent()).resolves.toMatch(/\{/)
    }
    await page.goto(`${server.sandboxUrl}/console/operations?status=failed`)
    expect(await page.locator(`tr[data-operation-id="${created.id}"]`).count()).toBe(0)
  })

  it("every page, at desktop and phone width: keyboard-reachable, no sideways scrolling on a phone, screenshots saved", async () => {
    const created = await api("production", "/v2/vehicles/AE123FG/modules", apiKey.production, { method: "POST", body: JSON.stringify({ modules: ["vtv"] }) })
    expect(created.status).toBe(202)

    /** Nothing sticks out past the viewport's right edge (tables scroll inside their own box); then a screenshot. */
    const check = async (page: Page, name: string, viewport: Viewport) => {
      const overflowing = await page.evaluate(`[...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest(".table-wrap"))
        .map((e) => e.tagName.toLowerCase() + (e.className ? "." + e.className : ""))`) as Array<string>
      const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as number
      expect(overflow, `${name} on ${viewport}: ${overflowing.join(", ")}`).toBeLessThanOrEqual(0)
      await screenshot(page, `${name}-${viewport}`)
    }

    const pages = ["/console", "/console/keys", "/console/webhooks", "/console/operations", "/console/activity"]
    for (const viewport of ["desktop", "phone"] as const) {
      const page = await open(viewport)
      await page.goto(await link("production"))
      await check(page, "sign-in", viewport)
      await signedIn("production", page)
      for (const path of pages) {
        const res = await page.goto(`${server.productionUrl}${path}`)
        expect(res?.status(), path).toBe(200)
        if (path === "/console") await page.locator("#usage-chart[data-ready='true']").waitFor()
        await check(page, path === "/console" ? "overview" : path.split("/").at(-1)!, viewport)
      }
      // the first Tab lands on the skip link, which takes the keyboard to the content
      await page.keyboard.press("Tab")
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content")
      await page.keyboard.press("Enter")
      expect(await page.evaluate("document.activeElement?.id")).toBe("main")

      await page.goto(`${server.productionUrl}/console/operations`)
      const operationId = await page.locator("tr[data-operation-id]").first().getAttribute("data-operation-id")
      await page.goto(`${server.productionUrl}/console/operations/${operationId}`)
      expect(await heading(page)).toBe(`Operation ${operationId}`)
      await check(page, "operation", viewport)

      await page.goto(`${server.productionUrl}/console/keys`)
      await page.getByLabel("Name", { exact: true }).fill(`${viewport} screenshot key`)
      await page.getByRole("button", { name: "Create key" }).click()
      await check(page, "key-created", viewport)
      await page.goto(`${server.productionUrl}/console/webhooks`)
      await page.getByRole("button", { name: "Rotate secret" }).click()
      expect(await heading(page)).toBe("New signing secret")
      expect(await page.getByLabel("Signing secret", { exact: true }).inputValue()).toMatch(/^whsec_[0-9A-Za-z]{32}$/)
      await check(page, "secret-rotated", viewport)

      const refused = await open(viewport)
      await refused.goto(`${server.productionUrl}/console/sign-in/${"z".repeat(43)}`)
      await check(refused, "sign-in-refused", viewport)
    }
  }, 120_000)
})
