import { html, type Html } from './html.js'

/** The building blocks pages share: forms with their CSRF field, flash messages, accessible tables, money and dates. */

export interface Flash { kind: 'ok' | 'info' | 'error'; text: string }

/** The hidden field every state-changing form carries (the router refuses a POST without it). */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`
}

/**
 * A form that posts to `action` with the CSRF field. `body` holds its fields and buttons.
 */
export function postForm(action: string, csrf: string, body: Html, attrs: { class?: string; label?: string } = {}): Html {
  return html`<form method="post" action="${action}"${attrs.class ? html` class="${attrs.class}"` : ''}${attrs.label ? html` aria-label="${attrs.label}"` : ''}>${csrfField(csrf)}${body}</form>`
}

/** A message after an action: a status for news, an alert for errors (screen readers announce both). */
export function flashBox(flash: Flash | null | undefined): Html {
  if (!flash) return html``
  return html`<div class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</div>`
}

/** A labelled input; `hint` is tied to it with aria-describedby. `id` defaults to `f-<name>` (give one when a page has two fields of one name). */
export function field(options: {
  name: string; id?: string; label: string; type?: 'text' | 'email' | 'password'; value?: string; hint?: string
  autocomplete?: string; required?: boolean; inputmode?: string; readonly?: boolean; minlength?: number; maxlength?: number
}): Html {
  const id = options.id ?? `f-${options.name.replace(/[^a-z0-9_-]/gi, '-')}`
  return html`<label for="${id}">${options.label}${options.hint ? html`<span class="hint" id="${id}-hint">${options.hint}</span>` : ''}</label>
<input id="${id}" name="${options.name}" type="${options.type ?? 'text'}"${options.value !== undefined ? html` value="${options.value}"` : ''}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}${options.required ? html` required` : ''}${options.inputmode ? html` inputmode="${options.inputmode}"` : ''}${options.readonly ? html` readonly` : ''}${options.minlength ? html` minlength="${options.minlength}"` : ''}${options.maxlength ? html` maxlength="${options.maxlength}"` : ''}${options.hint ? html` aria-describedby="${id}-hint"` : ''}>`
}

/** A labelled select of `options` ([value, label]). */
export function selectField(name: string, label: string, options: [string, string][], selected?: string): Html {
  const id = `f-${name}`
  return html`<label for="${id}">${label}</label><select id="${id}" name="${name}">${options.map(([value, text]) => html`<option value="${value}"${value === selected ? html` selected` : ''}>${text}</option>`)}</select>`
}

export interface Column<T> {
  header: string
  cell: (row: T) => Html | string | number | null
  /** Right-aligned, tabular figures (amounts, counts). */
  numeric?: boolean
}

/**
 * An accessible table: a caption, column headers with `scope`, a text for no rows, and a wrapper that scrolls
 * sideways on a narrow screen (focusable and named, so it can be scrolled with the keyboard).
 */
export function table<T>(options: { caption: string; columns: Column<T>[]; rows: readonly T[]; empty: string }): Html {
  if (options.rows.length === 0) return html`<p class="muted">${options.empty}</p>`
  const cls = (c: Column<T>) => (c.numeric ? html` class="num"` : '')
  return html`<div class="table-wrap" role="region" aria-label="${options.caption}" tabindex="0"><table>
<caption>${options.caption}</caption>
<thead><tr>${options.columns.map((c) => html`<th scope="col"${cls(c)}>${c.header}</th>`)}</tr></thead>
<tbody>${options.rows.map((row) => html`<tr>${options.columns.map((c) => html`<td${cls(c)}>${c.cell(row)}</td>`)}</tr>`)}</tbody>
</table></div>`
}

/** The minor units of a currency (2 for USD, 0 for JPY, 3 for KWD), as Intl knows them. */
export function minorUnits(currency: string): number {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
}

/** An amount in minor units shown in its currency: `formatMoney(1250, 'USD')` is `$12.50`, `formatMoney(1250, 'JPY')` `¥1,250`. */
export function formatMoney(minor: number, currency: string): string {
  const digits = minorUnits(currency)
  return new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(minor / 10 ** digits)
}

const dateTime = new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: 'UTC', timeZoneName: 'short' })

/** A moment in UTC, in a `<time>` element carrying the exact ISO value. */
export function formatTime(at: Date): Html {
  return html`<time datetime="${at.toISOString()}">${dateTime.format(at)}</time>`
}

/** "Newer" / "Older" links of a keyset-paginated list. */
export function pager(base: string, older: string | null, isFirst: boolean): Html {
  if (!older && isFirst) return html``
  return html`<nav class="pager" aria-label="Pages">${!isFirst ? html`<a href="${base}">Newest</a>` : ''}${older ? html`<a href="${base}?before=${encodeURIComponent(older)}">Older</a>` : ''}</nav>`
}
