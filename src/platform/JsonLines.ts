/**
 * Reading JSON Lines files for imports: every line is parsed and validated, and every problem is
 * reported with its line number, before anything is written.
 */
import { FileSystem } from "@effect/platform"
import { Data, Effect, Either, ParseResult, Schema } from "effect"

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
export const readJsonLines = <A, I>(
  path: string,
  schema: Schema.Schema<A, I>,
  unique?: { readonly name: string; readonly key: (a: A) => string | undefined }
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) => new FileUnreadable({ path, reason: error.message }))
    )
    const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })
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
      if (Either.isLeft(result)) {
        const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left).slice(0, 3)
        problems.push({
          line,
          message: issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ` : "") + issue.message).join("; ")
        })
        return
      }
      const key = unique?.key(result.right)
      if (unique && key !== undefined) {
        const first = seen.get(key)
        if (first !== undefined) {
          problems.push({ line, message: `${unique.name} ${key} already appears on line ${first}` })
          return
        }
        seen.set(key, line)
      }
      rows.push({ line, value: result.right })
    })
    if (problems.length > 0) return yield* new InvalidLines({ path, problems })
    return rows
  })
