/**
 * The arrows of the code point one way. Read from the source's own import statements:
 *
 * - no file imports itself back through others (no circle of files);
 * - `src/platform/` knows no feature and no workflow, and keeps every file in the folder of its
 *   concern;
 * - the workflows reach only the folders bundled into Temporal's sandbox, and the plain
 *   definitions they share from `src/platform/` import nothing;
 * - the worker gets its activities without the HTTP application;
 * - no two folders import each other, and the concerns of `src/platform/` make no circle at all.
 *
 * There are no exceptions: a new arrow that breaks a rule fails here.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { WORKFLOW_SOURCE_DIRS } from "../../src/platform/process/workflowSources.js"
import { readSource, REPOSITORY_ROOT, sourceFiles } from "../support/SourceFiles.js"

const SOURCE_DIRS = ["src", "workflows", "worker"]

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g

/** Every module `text` imports, as written (packages and files alike). */
const specifiersOf = (text: string) => [...text.matchAll(IMPORT)].map((match) => match[1] ?? match[2]!)

/** Every file's imports of other source files, by path from the repository root. */
const importGraph = () => {
  const files = SOURCE_DIRS.flatMap(sourceFiles)
  const known = new Set(files)
  const graph = new Map<string, Array<string>>()
  for (const file of files) {
    const text = readSource(file)
    const targets: Array<string> = []
    for (const specifier of specifiersOf(text)) {
      if (!specifier.startsWith(".")) continue
      const resolved = Path.posix.normalize(Path.posix.join(Path.posix.dirname(file), specifier))
      const candidates = [resolved, resolved.replace(/\.js$/, ".ts"), `${resolved}.ts`, `${resolved}/index.ts`]
      const target = candidates.find((candidate) => known.has(candidate))
      if (target !== undefined && target !== file) targets.push(target)
    }
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/**
 * The folder a file belongs to, for the folder rules: `src/platform/<concern>`, `src/<folder>`, or
 * the top folder. The files at the root of `src/` are the composition root (the whole contract,
 * `Api.ts`, and the application built from every feature); a feature's handlers name the whole
 * contract, as `HttpApiBuilder.group` needs, so they belong to no folder here.
 */
const folderOf = (file: string): string | undefined => {
  const parts = file.split("/")
  if (parts[0] !== "src") return parts[0]!
  if (parts[1] === "platform" && parts.length > 3) return `src/platform/${parts[2]}`
  return parts.length > 2 ? `src/${parts[1]}` : undefined
}

/** The other folders each folder imports from. */
const folderArrows = (graph: Map<string, Array<string>>) => {
  const arrows = new Map<string, Array<string>>()
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const [from, to] = [folderOf(file), folderOf(target)]
      if (from === undefined || to === undefined || from === to) continue
      const known = arrows.get(from) ?? []
      if (!known.includes(to)) arrows.set(from, [...known, to])
    }
  }
  return arrows
}

/** Files that import each other through a loop (Tarjan's strongly connected components). */
const circles = (graph: Map<string, Array<string>>) => {
  let index = 0
  const indexOf = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (node: string) => {
    indexOf.set(node, index)
    low.set(node, index++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!))
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node)
  return found.map((component) => component.join(" ⇄ ")).sort()
}

const graph = importGraph()

describe("the imports", () => {
  it("are read: every source folder has files, and files import files", () => {
    expect(graph.size).toBeGreaterThan(150)
    expect([...graph.values()].flat().length).toBeGreaterThan(500)
  })

  it("make no circle of files", () => {
    expect(circles(graph)).toEqual([])
  })

  it("from src/platform reach no feature and no workflow", () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      file.startsWith("src/platform/")
        ? targets.filter((target) => !target.startsWith("src/platform/")).map((target) => `${file} → ${target}`)
        : []
    )
    expect(upward.sort()).toEqual([])
  })

  it("from one concern of src/platform to another make no circle, however long", () => {
    const arrows = folderArrows(graph)
    const platform = new Map(
      [...arrows]
        .filter(([from]) => from.startsWith("src/platform/"))
        .map(([from, to]) => [from, to.filter((folder) => folder.startsWith("src/platform/"))])
    )
    expect([...platform.values()].flat().length).toBeGreaterThan(5)
    expect(circles(platform)).toEqual([])
  })

  it("from the workflows reach only the folders bundled for the sandbox", () => {
    const reached = new Set<string>()
    const visit = (file: string) => {
      if (reached.has(file)) return
      reached.add(file)
      for (const next of graph.get(file) ?? []) visit(next)
    }
    for (const file of sourceFiles("workflows")) visit(file)
    expect(reached.has("src/platform/sandboxSafe/RetryPolicy.ts")).toBe(true)
    expect([...reached].filter((file) => !WORKFLOW_SOURCE_DIRS.some((dir) => file.startsWith(`${dir}/`)))).toEqual([])
  })

  it("from the plain definitions shared with the workflows reach nothing at all", () => {
    const shared = WORKFLOW_SOURCE_DIRS.filter((dir) => dir !== "workflows").flatMap(sourceFiles)
    expect(shared.length).toBeGreaterThan(0)
    expect(shared.flatMap((file) => specifiersOf(readSource(file)).map((specifier) => `${file} → ${specifier}`))).toEqual([])
  })

  it("from the worker never reach the HTTP application", () => {
    const reached = new Set<string>()
    const visit = (file: string) => {
      if (reached.has(file)) return
      reached.add(file)
      for (const next of graph.get(file) ?? []) visit(next)
    }
    visit("worker/main.ts")
    expect(reached.has("src/ActivitiesLive.ts")).toBe(true)
    expect([...reached].filter((file) => ["src/Http.ts", "src/Listeners.ts", "src/main.ts", "src/server.ts"].includes(file))).toEqual([])
  })

  it("tie no two folders both ways", () => {
    const arrows = new Set([...folderArrows(graph)].flatMap(([from, targets]) => targets.map((to) => `${from} → ${to}`)))
    const pairs = [...arrows]
      .map((arrow) => arrow.split(" → ") as [string, string])
      .filter(([from, to]) => from < to && arrows.has(`${to} → ${from}`))
      .map(([a, b]) => `${a} ⇄ ${b}`)
      .sort()
    expect(pairs).toEqual([])
  })
})

describe("src/platform", () => {
  it("keeps every file in the folder of its concern, each concern a folder of its own", () => {
    const atRoot = Fs.readdirSync(Path.join(REPOSITORY_ROOT, "src/platform"), { withFileTypes: true })
      .filter((entry) => !entry.isDirectory())
      .map((entry) => entry.name)
    expect(atRoot).toEqual([])
    expect(folderOf("src/platform/db/Database.ts")).toBe("src/platform/db")
    expect(folderOf("src/platform/db/migrations/0001_foundation.ts")).toBe("src/platform/db")
  })
})
