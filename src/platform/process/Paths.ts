/**
 * Files shipped with the project (demo data), found from wherever the code runs: the sources or
 * the cached bundle under node_modules.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

let root: string | undefined

export const projectRoot = (): string => {
  if (root !== undefined) return root
  let dir = Path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = Path.join(dir, "package.json")
    if (Fs.existsSync(manifest) && JSON.parse(Fs.readFileSync(manifest, "utf8")).name === "vehicle-data-api") {
      return (root = dir)
    }
    const parent = Path.dirname(dir)
    if (parent === dir) throw new Error("cannot find the project root")
    dir = parent
  }
}

export const demoDataFile = (name: "catalog.jsonl" | "registry.jsonl") => Path.join(projectRoot(), "data", name)
