import { escapeHtml } from '../../lib/html.js'

/**
 * Typed HTML templates, escaped by default: every value interpolated into `html\`…\`` is escaped unless it is
 * itself `Html` (another template, or `raw()` on purpose). Arrays are joined; null, undefined and false vanish.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string { return this.text }
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

/** Markup trusted as it is (an SVG drawn by the qrcode package, a stylesheet): never for text that came from a person. */
export function raw(text: string): Html {
  return new Html(text)
}
