import { attrs, html, type Html } from '../../lib/html.js'

export { formatMoney, minorUnits } from '../../lib/money-format.js'

/** The building blocks pages share: forms with their CSRF field, flash messages, accessible tables, money and dates. */

export interface Flash {
  kind: 'ok' | 'info' | 'error'
  text: string
}

/** The hidden field every state-changing form carries (the router refuses a POST without it). */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`
}

/** The id of a field's hint (what `aria-describedby` names), or null when it has none. */
function hintId(id: string, hint: string | undefined): string | null {
  return hint ? `${id}-hint` : null
}

/** A field's label, with its hint inside when there is one; `hidden` keeps it for screen readers only. */
function labelWithHint(id: string, label: string, hint: string | undefined, hidden = false): Html {
  const note = hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : ''
  return html`<label${attrs({ for: id, class: hidden && 'visually-hidden' })}>${label}${note}</label>`
}

/**
 * A form that posts to `action` with the CSRF field. `body` holds its fields and buttons.
 */
export function postForm(
  action: string,
  csrf: string,
  body: Html,
  options: { class?: string; label?: string } = {},
): Html {
  const more = attrs({ class: options.class, 'aria-label': options.label })
  return html`<form method="post" action="${action}"${more}>${csrfField(csrf)}${body}</form>`
}

/** A message after an action: a status for news, an alert for errors (screen readers announce both). */
export function flashBox(flash: Flash | null | undefined): Html {
  if (!flash) return html``
  return html`<div class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</div>`
}

/** A labelled input; `hint` is tied to it with aria-describedby. `id` defaults to `f-<name>` (give one when a page has two fields of one name). */
export function field(options: {
  name: string
  id?: string
  label: string
  type?: 'text' | 'email' | 'password'
  value?: string
  hint?: string
  autocomplete?: string
  required?: boolean
  inputmode?: string
  readonly?: boolean
  minlength?: number
  maxlength?: number
}): Html {
  const id = options.id ?? `f-${options.name.replace(/[^a-z0-9_-]/gi, '-')}`
  const input = attrs({
    id,
    name: options.name,
    type: options.type ?? 'text',
    value: options.value,
    autocomplete: options.autocomplete,
    required: options.required,
    inputmode: options.inputmode,
    readonly: options.readonly,
    minlength: options.minlength,
    maxlength: options.maxlength,
    'aria-describedby': hintId(id, options.hint),
  })
  return html`${labelWithHint(id, options.label, options.hint)}
<input${input}>`
}

/**
 * A labelled select of `options` ([value, label]). `id` defaults to `f-<name>` (give one when a page has two fields
 * of one name); `hideLabel` keeps the label for screen readers only (a select in a table row, named by its row).
 */
export function selectField(
  name: string,
  label: string,
  options: [string, string][],
  selected?: string,
  extra: { id?: string; hint?: string; hideLabel?: boolean } = {},
): Html {
  const id = extra.id ?? `f-${name}`
  const choices = options.map(
    ([value, text]) =>
      html`<option${attrs({ value, selected: value === selected })}>${text}</option>`,
  )
  const select = attrs({ id, name, 'aria-describedby': hintId(id, extra.hint) })
  return html`${labelWithHint(id, label, extra.hint, extra.hideLabel)}<select${select}>${choices}</select>`
}

/** A labelled multi-line field (pasted keys, address lists, a CSV file's lines); `hint` is tied to it like `field`'s. */
export function textareaField(options: {
  name: string
  id?: string
  label: string
  value?: string
  hint?: string
  rows?: number
  required?: boolean
  maxlength?: number
  mono?: boolean
  placeholder?: string
}): Html {
  const id = options.id ?? `f-${options.name.replace(/[^a-z0-9_-]/gi, '-')}`
  const area = attrs({
    id,
    name: options.name,
    rows: options.rows ?? 4,
    spellcheck: 'false',
    autocapitalize: 'off',
    class: options.mono && 'mono',
    required: options.required,
    maxlength: options.maxlength,
    placeholder: options.placeholder,
    'aria-describedby': hintId(id, options.hint),
  })
  return html`${labelWithHint(id, options.label, options.hint)}
<textarea${area}>${options.value ?? ''}</textarea>`
}

/** Checkboxes of one name in a fieldset whose legend names the group; `checked` lists the ticked values. */
export function checkboxGroup(
  name: string,
  legend: string,
  options: [string, string][],
  checked: readonly string[],
  extra: { idPrefix?: string; hint?: string } = {},
): Html {
  const prefix = extra.idPrefix ?? `f-${name}`
  const boxes = options.map(([value, text], i) => {
    const box = attrs({
      type: 'checkbox',
      id: `${prefix}-${i}`,
      name,
      value,
      checked: checked.includes(value),
    })
    return html`<label class="check" for="${prefix}-${i}"><input${box}> ${text}</label>`
  })
  const hint = extra.hint ? html`<p class="hint" id="${prefix}-hint">${extra.hint}</p>` : ''
  return html`<fieldset class="checks"${attrs({ 'aria-describedby': hintId(prefix, extra.hint) })}><legend>${legend}</legend>${hint}
${boxes}</fieldset>`
}

/** A form that only reads (filters, a choice of organization): GET, so the result has an address and no token is needed. */
export function getForm(action: string, body: Html, label: string): Html {
  return html`<form method="get" action="${action}" class="filters" role="search" aria-label="${label}">${body}</form>`
}

/** A description list of label → value pairs (one object's fields). */
export function details(rows: [string, Html | string | number | null][]): Html {
  return html`<dl class="details">${rows.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value ?? ''}</dd></div>`)}</dl>`
}

/** An address with query parameters (empty ones left out). */
export function withQuery(path: string, params: Record<string, string | null | undefined>): string {
  const query = new URLSearchParams(
    Object.entries(params).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '',
    ),
  ).toString()
  return query ? `${path}?${query}` : path
}

/**
 * "First page" / "Next page" links of a list paginated with the API's cursors (`next_cursor`, passed back as
 * `after`), keeping the list's filters.
 */
export function cursorPager(
  path: string,
  filters: Record<string, string | null | undefined>,
  next: string | null,
  isFirst: boolean,
): Html {
  if (!next && isFirst) return html``
  return html`<nav class="pager" aria-label="Pages">${!isFirst ? html`<a href="${withQuery(path, filters)}">First page</a>` : ''}${next ? html`<a href="${withQuery(path, { ...filters, after: next })}">Next page</a>` : ''}</nav>`
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
export function table<T>(options: {
  caption: string
  columns: Column<T>[]
  rows: readonly T[]
  empty: string
}): Html {
  if (options.rows.length === 0) return html`<p class="muted">${options.empty}</p>`
  const cls = (c: Column<T>) => attrs({ class: c.numeric && 'num' })
  // `list`: on a phone each row becomes a card of labelled facts (each cell shows its column's `data-label`).
  return html`<div class="table-wrap list" role="region" aria-label="${options.caption}" tabindex="0"><table>
<caption>${options.caption}</caption>
<thead><tr>${options.columns.map((c) => html`<th scope="col"${cls(c)}>${c.header}</th>`)}</tr></thead>
<tbody>${options.rows.map((row) => html`<tr>${options.columns.map((c) => html`<td${cls(c)} data-label="${c.header}">${c.cell(row)}</td>`)}</tr>`)}</tbody>
</table></div>`
}

const dateTime = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
})

/** A moment in UTC, in a `<time>` element carrying the exact ISO value. */
export function formatTime(at: Date): Html {
  return html`<time datetime="${at.toISOString()}">${dateTime.format(at)}</time>`
}

/** "Newer" / "Older" links of a keyset-paginated list. */
export function pager(base: string, older: string | null, isFirst: boolean): Html {
  if (!older && isFirst) return html``
  return html`<nav class="pager" aria-label="Pages">${!isFirst ? html`<a href="${base}">Newest</a>` : ''}${older ? html`<a href="${base}?before=${encodeURIComponent(older)}">Older</a>` : ''}</nav>`
}
