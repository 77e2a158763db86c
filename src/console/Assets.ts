/**
 * The console's static files, served by the API itself (no CDN): its own stylesheet and script,
 * and uPlot's, read once at start.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { projectRoot } from "../platform/process/Paths.js"

export interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

const CSS = "text/css; charset=utf-8"
const JS = "text/javascript; charset=utf-8"

export const loadAssets = (): ReadonlyMap<string, Asset> => {
  const own = (name: string) => Path.join(projectRoot(), "src", "console", "assets", name)
  const uplot = (name: string) => createRequire(Path.join(projectRoot(), "package.json")).resolve(`uplot/dist/${name}`)
  const files: ReadonlyArray<readonly [string, string, string]> = [
    ["console.css", own("console.css"), CSS],
    ["console.js", own("console.js"), JS],
    ["uplot.css", uplot("uPlot.min.css"), CSS],
    ["uplot.js", uplot("uPlot.iife.min.js"), JS]
  ]
  return new Map(files.map(([name, file, contentType]) => [name, { body: Fs.readFileSync(file), contentType }]))
}
