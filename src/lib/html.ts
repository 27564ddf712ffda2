/**
 * The one way the service writes HTML (the console, the hosted eSIM page, the docs pages): typed templates,
 * escaped by default. Every value interpolated into `html\`…\`` is escaped unless it is itself `Html` (another
 * template, or `raw()` on purpose). Arrays are joined; null, undefined and false vanish.
 */

/** Escapes text for HTML element and attribute content. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

/** Markup built by `html`, `raw` or `attrs`: interpolated as it is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

function piece(value: unknown): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(piece).join('')
  return escapeHtml(value)
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]
  return new Html(out)
}

/** Markup trusted as it is (an SVG drawn by the qrcode package, a stylesheet): never text that came from a person. */
export function raw(text: string): Html {
  return new Html(text)
}

/** An attribute's value: text or a number is written escaped, `true` writes the bare name, absent ones vanish. */
export type AttrValue = string | number | boolean | null | undefined

/**
 * Attributes, each preceded by a space, in the order given: `<input${attrs({ value, required: true, hidden: false })}>`
 * is `<input value="…" required>`. null, undefined and false leave the attribute out (an empty string keeps it).
 */
export function attrs(list: Record<string, AttrValue>): Html {
  let out = ''
  for (const [name, value] of Object.entries(list)) {
    if (value === null || value === undefined || value === false) continue
    out += value === true ? ` ${name}` : ` ${name}="${escapeHtml(value)}"`
  }
  return new Html(out)
}

/** Pieces of markup one a line (rows of a table, items of a list), as the source of a page reads best. */
export function lines(items: readonly Html[]): Html {
  return new Html(items.map((item) => item.text).join('\n'))
}
