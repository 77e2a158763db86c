/**
 * HTML built from tagged templates: every interpolated value is escaped unless it is already
 * `Html` (made by this tag), so no page can be given markup by the data it shows.
 */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

type Value = Html | string | number | null | undefined | false | ReadonlyArray<Value>

const render = (value: Value): string => {
  if (value === null || value === undefined || value === false) return ""
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join("")
  return escapeHtml(String(value))
}

export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Value>): Html => {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new Html(out)
}

/** JSON for a `<script type="application/json">` block: nothing in it can close the element. */
export const jsonBlock = (id: string, data: unknown) =>
  new Html(`<script type="application/json" id="${escapeHtml(id)}">${
    JSON.stringify(data).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")
  }</script>`)
