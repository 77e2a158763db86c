/**
 * The operator queries the operations guide (docs/operations.md) shows are valid Temporal
 * visibility ("List Filter") syntax: only the documented operators (=, !=, >, >=, <, <=, AND, OR,
 * (), BETWEEN … AND, IN, STARTS_WITH), only search attributes that exist (Temporal's own, or ours
 * from SEARCH_ATTRIBUTES), values that fit each attribute. The local test server cannot run list
 * queries, so their syntax is checked here against that grammar.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { SEARCH_ATTRIBUTES, WORKFLOW_KINDS } from "../../workflows/shared.js"
import { ROOT } from "../support/Processes.js"

const EXECUTION_STATUSES = ["Running", "Completed", "Failed", "Canceled", "Terminated", "ContinuedAsNew", "TimedOut"]
const SYSTEM_KEYWORDS = ["WorkflowId", "WorkflowType", "RunId", "TaskQueue", "ExecutionStatus", "TemporalChangeVersion"]
const SYSTEM_TIMES = ["StartTime", "CloseTime", "ExecutionTime"]
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

type Token = { readonly kind: "word" | "string" | "op" | "paren" | "comma"; readonly text: string }

const tokenize = (query: string): Array<Token> => {
  const tokens: Array<Token> = []
  const pattern = /\s*(?:('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(!=|>=|<=|=|>|<)|([()])|(,)|([A-Za-z_][A-Za-z0-9_]*))/y
  let at = 0
  while (at < query.length) {
    if (/^\s*$/.test(query.slice(at))) break
    pattern.lastIndex = at
    const match = pattern.exec(query)
    if (!match) throw new Error(`unexpected text at "${query.slice(at, at + 20)}"`)
    at = pattern.lastIndex
    if (match[1]) tokens.push({ kind: "string", text: match[1].slice(1, -1) })
    else if (match[2]) tokens.push({ kind: "op", text: match[2] })
    else if (match[3]) tokens.push({ kind: "paren", text: match[3] })
    else if (match[4]) tokens.push({ kind: "comma", text: "," })
    else tokens.push({ kind: "word", text: match[5]! })
  }
  return tokens
}

/** Parses a List Filter; throws with the reason when it is not valid. */
export const checkListFilter = (query: string) => {
  const tokens = tokenize(query)
  let i = 0
  const peek = () => tokens[i]
  const next = () => {
    const token = tokens[i++]
    if (token === undefined) throw new Error("unexpected end of query")
    return token
  }
  const keyword = (word: string) => peek()?.kind === "word" && peek()!.text.toUpperCase() === word

  const value = (attribute: string) => {
    const token = next()
    if (token.kind !== "string") throw new Error(`${attribute} needs a quoted value, got ${token.text}`)
    if (attribute === "ExecutionStatus" && !EXECUTION_STATUSES.includes(token.text)) throw new Error(`no execution status ${token.text}`)
    if (SYSTEM_TIMES.includes(attribute) && !RFC3339.test(token.text)) throw new Error(`${attribute} needs an RFC 3339 time, got ${token.text}`)
    if (attribute === "VdaKind" && !(WORKFLOW_KINDS as ReadonlyArray<string>).includes(token.text)) throw new Error(`no kind ${token.text}`)
  }

  const comparison = () => {
    const attribute = next()
    const known = [...SYSTEM_KEYWORDS, ...SYSTEM_TIMES, ...SEARCH_ATTRIBUTES.map((a) => a.name)]
    if (attribute.kind !== "word" || !known.includes(attribute.text)) throw new Error(`unknown search attribute ${attribute.text}`)
    const name = attribute.text
    if (keyword("IN")) {
      next()
      if (next().text !== "(") throw new Error("IN needs a list")
      value(name)
      while (peek()?.kind === "comma") {
        next()
        value(name)
      }
      if (next().text !== ")") throw new Error("unclosed IN list")
    } else if (keyword("BETWEEN")) {
      next()
      value(name)
      if (!keyword("AND")) throw new Error("BETWEEN needs AND")
      next()
      value(name)
    } else if (keyword("STARTS_WITH")) {
      if (SYSTEM_TIMES.includes(name)) throw new Error("STARTS_WITH is for keywords")
      next()
      value(name)
    } else {
      const op = next()
      if (op.kind !== "op") throw new Error(`expected an operator after ${name}, got ${op.text}`)
      value(name)
    }
  }

  const primary = (): void => {
    if (peek()?.text === "(") {
      next()
      expression()
      if (next().text !== ")") throw new Error("unclosed parenthesis")
    } else comparison()
  }

  const expression = (): void => {
    primary()
    while (keyword("AND") || keyword("OR")) {
      next()
      primary()
    }
  }

  expression()
  if (i !== tokens.length) throw new Error(`unexpected ${tokens[i]!.text}`)
}

/** The queries of the operations guide's operator section: one per `--` comment, continuation lines joined. */
const guideQueries = () => {
  const guide = Fs.readFileSync(Path.join(ROOT, "docs/operations.md"), "utf8")
  const section = guide.slice(guide.indexOf("### Temporal for platform engineers"))
  const block = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? ""
  const queries: Array<string> = []
  for (const line of block.split("\n")) {
    if (line.trim() === "") continue
    if (line.startsWith("--")) queries.push("")
    else queries[queries.length - 1] += ` ${line.trim()}`
  }
  return queries.map((q) => q.trim())
}

describe("the operations guide's operator queries", () => {
  it("are there, and name every kind of workflow", () => {
    expect(guideQueries().length).toBeGreaterThanOrEqual(4)
    const kinds = new Set(guideQueries().flatMap((query) => [...query.matchAll(/VdaKind (?:=|!=|IN) \(?([^)]*?)\)?(?: AND| OR|$)/g)].flatMap((m) => m[1]!.match(/'[a-z]+'/g) ?? [])))
    expect([...kinds].map((kind) => kind.slice(1, -1)).sort()).toEqual([...WORKFLOW_KINDS].sort())
  })

  it.each(guideQueries())("%s", (query) => {
    expect(() => checkListFilter(query)).not.toThrow()
  })
})

describe("the grammar check itself", () => {
  it.each([
    ["WorkflowId ENDS_WITH 'op_1'", /expected an operator/],
    ["VdaAccount = 'x'", /unknown search attribute VdaAccount/],
    ["ExecutionStatus = 'Retrying'", /no execution status/],
    ["CloseTime >= 'today'", /RFC 3339/],
    ["VdaStatus = failed", /quoted value/],
    ["VdaKind = 'operation'", /no kind/],
    ["(VdaStatus = 'failed' VdaKind = 'modules')", /unclosed parenthesis/],
    ["VdaStatus = 'failed' AND", /unexpected end/]
  ])("refuses %s", (query, reason) => {
    expect(() => checkListFilter(query)).toThrow(reason)
  })

  it("accepts the documented operators", () => {
    expect(() =>
      checkListFilter(
        "(VdaKind IN ('modules', 'vehicle') OR WorkflowId STARTS_WITH 'webhook-delivery/') AND StartTime BETWEEN '2026-11-01T00:00:00Z' AND '2026-11-02T00:00:00-03:00' AND VdaStatus != 'failed'"
      )
    ).not.toThrow()
  })
})
