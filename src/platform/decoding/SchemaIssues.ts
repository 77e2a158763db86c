/**
 * What a value failed to decode against, as people read it: in an import file's line, in a
 * 400's message, in a start-up line about a setting. One wording for all of them.
 */
import { SchemaAST, SchemaIssue } from "effect"

/**
 * The wording this service has always used: a missing field "is missing", an unknown one
 * "is unexpected, expected: …" with the fields the line may have. Other issues (and messages a
 * schema sets itself) read as Effect words them.
 */
const leafHook: SchemaIssue.LeafHook = (issue) => {
  switch (issue._tag) {
    case "MissingKey":
      return typeof issue.annotations?.messageMissingKey === "string" ? issue.annotations.messageMissingKey : "is missing"
    case "UnexpectedKey": {
      const custom = issue.ast.annotations?.messageUnexpectedKey
      if (typeof custom === "string") return custom
      const expected = SchemaAST.isObjects(issue.ast)
        ? issue.ast.propertySignatures.map((property) => JSON.stringify(String(property.name)))
        : []
      return expected.length > 0 ? `is unexpected, expected: ${expected.join(" | ")}` : "is unexpected"
    }
    default:
      return SchemaIssue.defaultLeafHook(issue)
  }
}

const format = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook })

/** Each problem with its path. */
export const issuesOf = (issue: SchemaIssue.Issue) => format(issue).issues

/** The first `max` problems, `path: message` each (the path under `at`, when the value was part of one), joined by "; ". */
export const describeIssues = (issue: SchemaIssue.Issue, max = 3, at: ReadonlyArray<PropertyKey> = []) =>
  issuesOf(issue).slice(0, max).map(({ message, path }) => {
    const whole = [...at, ...(path ?? [])]
    return (whole.length > 0 ? `${whole.map(String).join(".")}: ` : "") + message
  }).join("; ")
