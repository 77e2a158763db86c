/**
 * The real-browser harness works here: Chromium starts from the unpacked cache, fills a form by
 * label, clicks by role, runs inline JS, keeps an HttpOnly cookie away from scripts but sends it
 * back, and writes desktop and phone screenshots.
 */
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Browser, launchBrowser, newPage, screenshot, screenshotDir } from "../support/Browser.js"

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Harness smoke</title>
  <style>
    body { font-family: sans-serif; margin: 2rem; }
    form { display: grid; gap: .5rem; max-width: 20rem; }
    #greeting { font-size: 1.5rem; }
  </style>
</head>
<body>
  <h1>Harness smoke</h1>
  <form method="post" action="/submit">
    <label for="name">Your name</label>
    <input id="name" name="name" autocomplete="off">
    <button type="button" id="greet">Greet</button>
    <button type="submit">Send</button>
  </form>
  <p id="greeting" role="status">Nobody greeted yet</p>
  <script>
    document.getElementById("greet").addEventListener("click", () => {
      document.getElementById("greeting").textContent = "Hello, " + document.getElementById("name").value + "!"
    })
  </script>
</body>
</html>`

/** Every request the server answered, in order. */
const seen: Array<{ readonly path: string; readonly cookie: string | undefined; readonly body: string }> = []

const server = Http.createServer((request, response) => {
  let body = ""
  request.setEncoding("utf8")
  request.on("data", (chunk: string) => (body += chunk))
  request.on("end", () => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname
    seen.push({ path, cookie: request.headers.cookie, body })
    if (path === "/") {
      response.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "set-cookie": ["session=s3cret; HttpOnly; Path=/; SameSite=Lax", "theme=dark; Path=/; SameSite=Lax"]
      })
      response.end(page)
    } else if (path === "/submit" && request.method === "POST") {
      const name = new URLSearchParams(body).get("name") ?? ""
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(`<!doctype html><meta charset="utf-8"><title>Sent</title><h1>Thanks, ${name.replace(/[<>&"]/g, "")}</h1>`)
    } else {
      response.writeHead(404).end()
    }
  })
})

let browser: Browser
let origin: string

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** Width and height from the IHDR chunk. */
const pngSize = (file: Buffer) => {
  expect(file.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true)
  expect(file.subarray(12, 16).toString("latin1")).toBe("IHDR")
  return { width: file.readUInt32BE(16), height: file.readUInt32BE(20) }
}

describe("real-browser harness", () => {
  it("fills a form, runs inline JS, keeps HttpOnly cookies from scripts and sends them back", async () => {
    const tab = await newPage(browser, "desktop")
    await tab.goto(`${origin}/`)
    await tab.getByLabel("Your name").fill("Ana")
    await tab.getByRole("button", { name: "Greet" }).click()
    await expect.poll(() => tab.getByRole("status").textContent()).toBe("Hello, Ana!")

    // the script sees the ordinary cookie and not the HttpOnly one
    const visible = await tab.evaluate<string>("document.cookie")
    expect(visible).toContain("theme=dark")
    expect(visible).not.toContain("session")

    await tab.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => tab.getByRole("heading").textContent()).toBe("Thanks, Ana")
    expect(seen[0]).toMatchObject({ path: "/", cookie: undefined })
    const submit = seen.find((request) => request.path === "/submit")
    expect(submit?.body).toBe("name=Ana")
    expect(submit?.cookie).toContain("session=s3cret")
    expect(submit?.cookie).toContain("theme=dark")
    await tab.context().close()
  })

  it("writes full-page PNG screenshots at desktop and phone size", async () => {
    const shots = { desktop: { width: 1280, height: 800 }, phone: { width: 390 * 2, height: 844 * 2 } } as const
    for (const viewport of ["desktop", "phone"] as const) {
      const tab = await newPage(browser, viewport)
      await tab.goto(`${origin}/`)
      expect(await tab.evaluate<number>("window.innerWidth")).toBe(viewport === "phone" ? 390 : 1280)
      await tab.getByLabel("Your name").fill("Ana")
      await tab.getByRole("button", { name: "Greet" }).click()
      await expect.poll(() => tab.getByRole("status").textContent()).toBe("Hello, Ana!")
      const name = `smoke-${viewport}`
      await Fs.rm(Path.join(screenshotDir, `${name}.png`), { force: true })
      const path = await screenshot(tab, name)
      await tab.context().close()
      expect(path).toBe(Path.join(screenshotDir, `${name}.png`))
      const size = pngSize(await Fs.readFile(path))
      expect(size.width).toBe(shots[viewport].width)
      expect(size.height).toBeGreaterThanOrEqual(shots[viewport].height)
    }
  })
})
