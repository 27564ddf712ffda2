import { escapeHtml, html, raw, type Html } from '../../../lib/html.js'
import { WEBHOOKS } from './developer-shared.js'
import { objectHref } from './object-display.js'

/**
 * Ids shown on the event and audit pages as links to their console pages: every kind with an object page,
 * and webhook endpoints.
 */

/** The console page of `id`, or null when its kind has none. */
export function idHref(id: string): string | null {
  if (/^whe_[0-9A-Za-z]+$/.test(id)) return `${WEBHOOKS}/${id}`
  return objectHref(id)
}

/** `id` in code, linked to its page when it has one; a dash for none. */
export function idLink(id: string | null | undefined): Html {
  if (!id) return html`<span class="muted">—</span>`
  const href = idHref(id)
  return href ? html`<a href="${href}"><code>${id}</code></a>` : html`<code>${id}</code>`
}

const QUOTED_ID = /&quot;([a-z0-9]+_[0-9A-Za-z]{10,40})&quot;/g

/** `value` as indented JSON in which every id with a console page (but `self`, the page's own) is a link to it. */
export function linkedJson(value: unknown, self = ''): Html {
  const text = escapeHtml(JSON.stringify(value, null, 2))
  return raw(
    text.replace(QUOTED_ID, (whole, id: string) => {
      const href = id === self ? null : idHref(id)
      return href ? `&quot;<a href="${escapeHtml(href)}">${id}</a>&quot;` : whole
    }),
  )
}

/**
 * The ids an object refers to (its `*_id` fields and string fields holding ids, one level deep) that have a
 * console page, in order of appearance, without `self`.
 */
export function relatedIds(object: unknown, self: string): string[] {
  if (object === null || typeof object !== 'object') return []
  const found: string[] = []
  for (const value of Object.values(object as Record<string, unknown>)) {
    if (typeof value !== 'string' || value === self || found.includes(value)) continue
    if (/^[a-z0-9]+_[0-9A-Za-z]{10,40}$/.test(value) && idHref(value)) found.push(value)
  }
  return found
}
