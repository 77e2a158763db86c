/**
 * The embedded PostgreSQL's binaries are staged under a predictable temporary path when running
 * as root: a staged copy is only used if it is verifiably ours and writable by nobody else.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { trustedStaging } from "../../src/platform/db/EmbeddedPostgres.js"

let dir: string

beforeEach(async () => {
  dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-staging-test-"))
  await Fs.chmod(dir, 0o755)
  await Fs.mkdir(Path.join(dir, "bin"), { mode: 0o755 })
  for (const program of ["initdb", "pg_ctl", "postgres"]) await Fs.writeFile(Path.join(dir, "bin", program), "#!/bin/sh\n", { mode: 0o755 })
})
afterEach(() => Fs.rm(dir, { recursive: true, force: true }))

describe("a staged binaries directory", () => {
  it("is trusted when it and its programs are ours and writable by nobody else", async () => {
    expect(await trustedStaging(dir)).toBe(true)
  })

  it("is refused when writable by others, at any level", async () => {
    await Fs.chmod(dir, 0o777)
    expect(await trustedStaging(dir)).toBe(false)
    await Fs.chmod(dir, 0o755)
    await Fs.chmod(Path.join(dir, "bin", "pg_ctl"), 0o775)
    expect(await trustedStaging(dir)).toBe(false)
  })

  it("is refused when a program is a symlink, or missing", async () => {
    await Fs.rm(Path.join(dir, "bin", "initdb"))
    expect(await trustedStaging(dir)).toBe(false)
    await Fs.symlink("/bin/true", Path.join(dir, "bin", "initdb"))
    expect(await trustedStaging(dir)).toBe(false)
  })

  it("is refused when another user owns it", async () => {
    const owner = (await Fs.stat(dir)).uid
    expect(await trustedStaging(dir, owner)).toBe(true)
    expect(await trustedStaging(dir, owner + 4321)).toBe(false)
  })
})
