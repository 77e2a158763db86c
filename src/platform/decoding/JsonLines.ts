/**
 * Reading JSON Lines files for imports: every line is parsed and validated, and every problem is
 * reported with its line number, before anything is written.
 */
import { Data, Effect, FileSystem, Result, Schema } from "effect"
import { describeIssues } from "./SchemaIssues.js"

export class FileUnreadable extends Data.TaggedError("FileUnreadable")<{ readonly path: string; readonly reason: string }> {
  override get message() {
    return `cannot read ${this.path}: ${this.reason}`
  }
}

export interface LineProblem {
  readonly line: number
  readonly message: string
}

export class InvalidLines extends Data.TaggedError("InvalidLines")<{
  readonly path: string
  readonly problems: ReadonlyArray<LineProblem>
}> {}

const MAX_PROBLEMS = 50



/**
 * Decodes every non-empty line with `schema`; fails with all the problems found (up to 50).
 * `unique` names what must not appear twice in the file (a plate, a codia).
 */

export const readJsonLines = Effect.fnUntraced(function*<S extends Schema.Decoder<unknown>, A = S["Type"]>(
  path: string,
  schema: S,
  unique?: { readonly name: string; readonly key: (a: A) => string | undefined }
) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(path).pipe(
    Effect.mapError((error) => new FileUnreadable({ path, reason: error.message }))
  )
  const decode = Schema.decodeUnknownResult(schema, { errors: "all", onExcessProperty: "error" })
  const rows: Array<{ readonly line: number; readonly value: A }> = []
  const problems: Array<LineProblem> = []
  const seen = new Map<string, number>()
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1
    if (raw.trim().length === 0 || problems.length >= MAX_PROBLEMS) return
    let json: unknown
    try {
      json = JSON.parse(raw)
    } catch (error) {
      problems.push({ line, message: `not valid JSON (${(error as Error).message})` })
      return
    }
    const result = decode(json)
    if (Result.isFailure(result)) {
      problems.push({ line, message: describeIssues(result.failure.issue) })
      return
    }
    const value = result.success as A
    const key = unique?.key(value)
    if (unique && key !== undefined) {
      const first = seen.get(key)
      if (first !== undefined) {
        problems.push({ line, message: `${unique.name} ${key} already appears on line ${first}` })
        return
      }
      seen.set(key, line)
    }
    rows.push({ line, value })
  })
  if (problems.length > 0) return yield* new InvalidLines({ path, problems })
  return rows
})
