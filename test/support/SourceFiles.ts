/** The repository's own source files, for tests that read the code itself. */
import * as Fs from "node:fs"
import * as Path from "node:path"

export const REPOSITORY_ROOT = Path.resolve(import.meta.dirname, "../..")

/** Every TypeScript or JavaScript source under `dir` (from the repository's root), by path from the root. */
export const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(Path.join(REPOSITORY_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = Path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path)
    return /\.(ts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** A source file's text, by path from the repository's root. */
export const readSource = (file: string) => Fs.readFileSync(Path.join(REPOSITORY_ROOT, file), "utf8")
