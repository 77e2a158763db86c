/**
 * Real-browser tests: headless Chromium (from `@sparticuz/chromium`, unpacked once per run by
 * `chromiumSetup.ts`) driven by `playwright-core`. Works the same on a fresh machine and in CI:
 * nothing comes from apt or the network.
 *
 * The caller owns the browser and closes it:
 *
 *   let browser: Browser
 *   beforeAll(async () => { browser = await launchBrowser() })
 *   afterAll(async () => { await browser?.close() })
 *
 * `newPage` opens each page in its own context (own cookies and storage); `page.context().close()`
 * ends one early, `browser.close()` ends them all. Screenshots go to
 * `test-results/console/<name>.png` at the repo root (git-ignored).
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContextOptions, chromium, type LaunchOptions, type Page } from "playwright-core"
import { inject } from "vitest"

export type { Browser, Page }

export type Viewport = "desktop" | "phone"

const viewports: Record<Viewport, BrowserContextOptions> = {
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }
}

export const screenshotDir = fileURLToPath(new URL("../../test-results/console/", import.meta.url))

/** Headless Chromium; close it in `afterAll`. */
export const launchBrowser = async (options: LaunchOptions = {}): Promise<Browser> => {
  const install = inject("chromium")
  if (!install.available) throw new Error(`no browser for tests: ${install.reason}`)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value
  env["FONTCONFIG_PATH"] = install.fontconfigPath
  env["LD_LIBRARY_PATH"] = [install.libraryPath, process.env["LD_LIBRARY_PATH"]].filter(Boolean).join(":")
  // not `Chromium.args` from the package: its --single-process ends the browser when the first context closes
  return chromium.launch({ timeout: 30_000, ...options, executablePath: install.executablePath, headless: true, env })
}

/** A page in a new context: desktop 1280×800, or a 390×844 touch phone at 2× pixels; en-US, UTC. */
export const newPage = async (browser: Browser, viewport: Viewport = "desktop"): Promise<Page> => {
  const context = await browser.newContext({ ...viewports[viewport], locale: "en-US", timezoneId: "UTC" })
  try {
    return await context.newPage()
  } catch (error) {
    await context.close()
    throw error
  }
}

/** A full-page PNG at test-results/console/<name>.png; returns its path. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`screenshot name must be a plain file name: ${name}`)
  await Fs.mkdir(screenshotDir, { recursive: true })
  const path = Path.join(screenshotDir, `${name}.png`)
  await page.screenshot({ path, fullPage: true, animations: "disabled", caret: "hide" })
  return path
}
