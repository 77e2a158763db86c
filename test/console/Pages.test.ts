/**
 * The console's pure pieces: HTML escaping (no data can inject markup), the JSON island the chart
 * reads, threshold notices at 80% and 100%, the sign-in throttle's window, and the route names
 * requests are recorded under (never a sign-in token).
 */
import { describe, expect, it } from "vitest"
import { html, jsonBlock } from "../../src/console/Html.js"
import { noticesOf } from "../../src/console/Notices.js"
import { consoleRouteOf, hrefOf, isConsolePath } from "../../src/console/Routes.js"
import { makeThrottle } from "../../src/console/Throttle.js"
import type { MeterUsage, Usage } from "../../src/metering/Api.js"

describe("html", () => {
  it("escapes every interpolated value unless it is markup made by the tag", () => {
    const name = `<script>alert("x")</script>&'`
    expect(html`<td>${name}</td>`.value).toBe("<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</td>")
    expect(html`<input value="${"\" onfocus=\"x"}">`.value).toBe("<input value=\"&quot; onfocus=&quot;x\">")
    expect(html`<ul>${["a", "<b>"].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe("<ul><li>a</li><li>&lt;b&gt;</li></ul>")
    expect(html`${null}${undefined}${false}${0}`.value).toBe("0")
  })

  it("a JSON island cannot close its script element", () => {
    const block = jsonBlock("data", { name: "</script><script>alert(1)</script>", amp: "&" }).value
    expect(block.match(/<\/script>/g)).toHaveLength(1)
    expect(block.endsWith("</script>")).toBe(true)
    const inner = block.slice(block.indexOf(">") + 1, -"</script>".length)
    expect(JSON.parse(inner)).toEqual({ name: "</script><script>alert(1)</script>", amp: "&" })
  })
})

const meter = (used: number, limit: number | null): MeterUsage => ({
  used,
  limit,
  remaining: limit === null ? null : Math.max(0, limit - used),
  startsAt: new Date("2026-11-01T03:00:00Z"),
  endsAt: new Date("2026-12-01T03:00:00Z")
})

const usageWith = (meters: Partial<Pick<Usage, "plateQueries" | "moduleQueries" | "uniquePlates" | "requests">>) =>
  ({
    plateQueries: meter(0, 100),
    moduleQueries: meter(0, 20),
    uniquePlates: meter(0, 25),
    requests: meter(0, 30),
    ...meters
  }) as Usage

describe("threshold notices", () => {
  const date = () => "1 Dec 2026, 00:00"

  it("none under 80%, a warning from 80%, reached at 100%; unlimited allowances never", () => {
    expect(noticesOf(usageWith({ plateQueries: meter(79, 100) }), date)).toEqual([])
    expect(noticesOf(usageWith({ plateQueries: meter(80, 100) }), date)).toEqual([{
      level: "warning",
      message: "You have used 80% of your monthly plate queries (80 of 100). It resets 1 Dec 2026, 00:00."
    }])
    expect(noticesOf(usageWith({ moduleQueries: meter(20, 20) }), date)).toEqual([{
      level: "reached",
      message: "You have used all your monthly module queries (20 of 20). Requests that need more are refused until 1 Dec 2026, 00:00."
    }])
    expect(noticesOf(usageWith({ plateQueries: meter(10_000, null) }), date)).toEqual([])
  })

  it("the per-minute request window is not a notice (it resets before anyone reads it)", () => {
    expect(noticesOf(usageWith({ requests: meter(30, 30) }), date)).toEqual([])
  })
})

describe("sign-in throttle", () => {
  it("refuses an address once it has failed N times in a minute, says how long to wait, and forgets the next minute", () => {
    const throttle = makeThrottle(2)
    const minute = Date.parse("2026-11-25T12:00:00Z")
    expect(throttle.check("10.0.0.1", minute + 1_000)).toBeUndefined()
    throttle.recordFailure("10.0.0.1", minute + 1_000)
    expect(throttle.check("10.0.0.1", minute + 2_000)).toBeUndefined()
    throttle.recordFailure("10.0.0.1", minute + 2_000)
    expect(throttle.check("10.0.0.1", minute + 45_500)).toBe(15)
    expect(throttle.check("10.0.0.2", minute + 45_500)).toBeUndefined()
    expect(throttle.check("10.0.0.1", minute + 60_000)).toBeUndefined()
  })

  it("remembers a bounded number of addresses: past 10,000 failing in one minute, newcomers share one allowance", () => {
    const throttle = makeThrottle(1)
    const minute = Date.parse("2026-11-25T12:00:00Z")
    for (let i = 0; i < 10_000; i++) throttle.recordFailure(`10.1.${i >> 8}.${i & 255}`, minute)
    expect(throttle.check("192.0.2.1", minute)).toBeUndefined()
    throttle.recordFailure("192.0.2.1", minute)
    expect(throttle.check("192.0.2.2", minute + 10_000)).toBe(50)
    expect(throttle.check("10.1.0.1", minute + 10_000)).toBe(50)
    expect(throttle.check("192.0.2.2", minute + 60_000)).toBeUndefined()
  })
})

describe("routes", () => {
  it("only /console and below are the console's", () => {
    expect(["/console", "/console/", "/console?x=1", "/console/keys"].every(isConsolePath)).toBe(true)
    expect(["/consoles", "/v2/console", "/", undefined].some(isConsolePath)).toBe(false)
  })

  it("addresses are built from the route table, parameters and queries encoded", () => {
    expect(hrefOf("overview")).toBe("/console")
    expect(hrefOf("revokeKey", { id: "key_01/../x" })).toBe("/console/keys/key_01%2F..%2Fx/revoke")
    expect(hrefOf("operations", {}, { status: "failed", before: "op_1&x=2" })).toBe("/console/operations?status=failed&before=op_1%26x%3D2")
    expect(consoleRouteOf(hrefOf("showLink", { token: "abc" }))).toBe("/console/sign-in/{token}")
  })

  it("requests are recorded by route template: a sign-in token never reaches a log or a metric", () => {
    expect(consoleRouteOf("/console/sign-in/AbCdEf0123456789AbCdEf0123456789AbCdEf01234")).toBe("/console/sign-in/{token}")
    expect(consoleRouteOf("/console/keys/key_01/revoke")).toBe("/console/keys/{id}/revoke")
    expect(consoleRouteOf("/console/operations?status=failed")).toBe("/console/operations")
    expect(consoleRouteOf("/console/nope")).toBe("unmatched")
  })
})
