import { html, type Html } from '../../../lib/html.js'
import {
  AGGREGATES,
  type AuthorizationRuleView,
  LIST_OPERATORS,
  MAX_CONDITIONS,
  MAX_MERCHANTS,
  NUMBER_ATTRIBUTES,
  OPERATORS,
  type Operator,
  type RuleType,
  TEXT_ATTRIBUTES,
  WINDOW_TYPES,
} from '../../authorization-rules/index.js'
import { field, selectField, table } from '../components.js'
import { objectLink } from './object-display.js'

/**
 * A rule's parameters in the console: the fields of each type's form (flat names, so a refused form is shown again
 * as it was typed), the API's `parameters` read from them, and the parameters in words. The service reads the
 * parameters as /v1 does: a bad value is refused there, naming its field (`parameters.window.seconds`).
 */

/** One field of the form as typed ('' when absent). */
export type Values = (name: string) => string

export const TYPE_LABELS: Record<RuleType, string> = {
  velocity_limit: 'Velocity limit',
  condition: 'Condition',
  merchant_lock: 'Merchant lock',
}

export const TYPE_HINTS: Record<RuleType, string> = {
  velocity_limit:
    'Limits how much, or how many authorizations, a card, an account or a cardholder may spend in a window.',
  condition:
    'Declines an authorization when every condition holds (a country, an amount, an MCC…).',
  merchant_lock: 'Only the merchants listed may be approved; any other is declined.',
}

const WINDOW_LABELS: Record<(typeof WINDOW_TYPES)[number], string> = {
  day: 'Day (from 00:00 UTC)',
  week: 'Week (from Monday 00:00 UTC)',
  month: 'Calendar month (UTC)',
  year: 'Calendar year (UTC)',
  all_time: 'All time',
  rolling: 'Rolling window (seconds below)',
}

const FILTERS: [name: string, label: string, hint: string, upper: boolean][] = [
  [
    'include_mccs',
    'Only these MCCs count',
    'Four digits each, separated by commas; empty: all.',
    false,
  ],
  ['exclude_mccs', 'These MCCs do not count', 'Four digits each, like 7995.', false],
  [
    'include_countries',
    'Only these countries count',
    'Three letters each, like USA; empty: all.',
    true,
  ],
  ['exclude_countries', 'These countries do not count', 'Three letters each, like PRK.', true],
  [
    'merchant_currencies',
    'Only these merchant currencies count',
    'Like EUR, GBP; empty: all.',
    true,
  ],
]

/** Condition rows and merchant rows shown blank under the filled ones. */
const SPARE_ROWS = 2

/** Words of a comma- or space-separated list. */
export function listOf(text: string, upper = false): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => (upper ? s.toUpperCase() : s))
    .filter((s) => s !== '')
}

/** A whole number as typed: a number, or the text itself (the service refuses it, naming the field). */
function numberOrText(text: string): number | string {
  const v = text.trim().replace(/[,_\s]/g, '')
  return /^\d{1,15}$/.test(v) ? Number(v) : text.trim()
}

// ---------------------------------------------------------------------------------------------------------
// A rule's parameters as the form's fields

/** The form's fields for a stored rule's parameters (the edit form starts from them). */
export function fieldsOf(rule: AuthorizationRuleView): Record<string, string> {
  const p = rule.parameters as Record<string, any>
  const out: Record<string, string> = {}
  if (rule.type === 'velocity_limit') {
    out.window_type = p.window.type
    out.window_seconds = p.window.seconds === null ? '' : String(p.window.seconds)
    out.aggregate = p.aggregate
    out.limit_amount = p.limit_amount === null ? '' : String(p.limit_amount)
    out.limit_count = p.limit_count === null ? '' : String(p.limit_count)
    for (const [name] of FILTERS) out[name] = (p.filters[name] as string[]).join(', ')
  } else if (rule.type === 'condition') {
    for (const [i, c] of (p.conditions as any[]).entries()) {
      out[`c${i}_attribute`] = c.attribute
      out[`c${i}_operator`] = c.operator
      out[`c${i}_value`] = Array.isArray(c.value) ? c.value.join(', ') : String(c.value)
    }
  } else {
    for (const [i, m] of (p.merchants as any[]).entries()) {
      out[`m${i}_name`] = m.name ?? ''
      out[`m${i}_mcc`] = m.mcc ?? ''
      out[`m${i}_country`] = m.country ?? ''
    }
  }
  return out
}

/** How many numbered rows (`c0_…`, `m0_…`) the values hold. */
function rowsIn(values: Values, prefix: 'c' | 'm', max: number): number {
  let n = 0
  for (let i = 0; i < max; i++) {
    const filled =
      prefix === 'c'
        ? values(`c${i}_attribute`) || values(`c${i}_value`)
        : values(`m${i}_name`) || values(`m${i}_mcc`) || values(`m${i}_country`)
    if (filled) n = i + 1
  }
  return n
}

/** The API's `parameters` of a `type` from the form's fields. */
export function parametersFrom(type: string, values: Values): Record<string, unknown> {
  if (type === 'velocity_limit') {
    // A length typed for another window than a rolling one is left out (the field says it is for rolling ones only).
    const seconds = values('window_type') === 'rolling' ? values('window_seconds').trim() : ''
    const filters = Object.fromEntries(
      FILTERS.map(([name, , , upper]) => [name, listOf(values(name), upper)]),
    )
    return {
      window: {
        type: values('window_type'),
        ...(seconds ? { seconds: numberOrText(seconds) } : {}),
      },
      aggregate: values('aggregate'),
      ...(values('limit_amount').trim()
        ? { limit_amount: numberOrText(values('limit_amount')) }
        : {}),
      ...(values('limit_count').trim() ? { limit_count: numberOrText(values('limit_count')) } : {}),
      filters,
    }
  }
  if (type === 'condition') {
    const conditions = []
    for (let i = 0; i < rowsIn(values, 'c', MAX_CONDITIONS + SPARE_ROWS); i++) {
      const attribute = values(`c${i}_attribute`)
      const operator = values(`c${i}_operator`)
      const typed = values(`c${i}_value`).trim()
      if (!attribute && !typed) continue
      const numeric = (NUMBER_ATTRIBUTES as readonly string[]).includes(attribute)
      const one = (v: string) => (numeric ? numberOrText(v) : v)
      const value = LIST_OPERATORS.includes(operator as Operator)
        ? typed
            .split(',')
            .map((v) => v.trim())
            .filter((v) => v !== '')
            .map(one)
        : one(typed)
      conditions.push({ attribute, operator, value })
    }
    return { conditions }
  }
  const merchants = []
  for (let i = 0; i < rowsIn(values, 'm', MAX_MERCHANTS + SPARE_ROWS); i++) {
    const name = values(`m${i}_name`).trim()
    const mcc = values(`m${i}_mcc`).trim()
    const country = values(`m${i}_country`).trim().toUpperCase()
    if (!name && !mcc && !country) continue
    merchants.push({
      ...(name ? { name } : {}),
      ...(mcc ? { mcc } : {}),
      ...(country ? { country } : {}),
    })
  }
  return { merchants }
}

// ---------------------------------------------------------------------------------------------------------
// The form's fields

const ATTRIBUTE_CHOICES: [string, string][] = [
  ['', '—'],
  ...[...TEXT_ATTRIBUTES, ...NUMBER_ATTRIBUTES].map((a): [string, string] => [a, a]),
]
const OPERATOR_CHOICES: [string, string][] = OPERATORS.map((o) => [o, o.replace(/_/g, ' ')])

/** The fields of a `type`'s parameters, filled with `values`; `prefix` keeps two forms of one page apart. */
export function parametersFields(type: RuleType, values: Values, prefix: string): Html {
  const id = (name: string) => `${prefix}-${name}`
  if (type === 'velocity_limit') {
    return html`<div class="grid2"><div>${selectField(
      'window_type',
      'Window',
      WINDOW_TYPES.map((w): [string, string] => [w, WINDOW_LABELS[w]]),
      values('window_type') || 'day',
      { id: id('window') },
    )}</div>
<div>${field({ name: 'window_seconds', id: id('seconds'), label: 'Rolling window length (seconds)', value: values('window_seconds'), inputmode: 'numeric', hint: 'Only for a rolling window: 60 to 31536000 (86400 is 24 hours).' })}</div>
<div>${selectField(
      'aggregate',
      'Counted per',
      AGGREGATES.map((a): [string, string] => [a, a]),
      values('aggregate') || 'card',
      {
        id: id('aggregate'),
        hint: "Whose spending counts: the card's own, its account's or its cardholder's.",
      },
    )}</div>
<div>${field({ name: 'limit_count', id: id('count'), label: 'At most this many approved authorizations', value: values('limit_count'), inputmode: 'numeric', hint: 'Empty: no count limit.' })}</div>
<div>${field({ name: 'limit_amount', id: id('amount'), label: 'At most this amount (minor units)', value: values('limit_amount'), inputmode: 'numeric', hint: "In the smallest unit of each card's account currency: 50000 is 500.00 USD. Empty: no amount limit." })}</div></div>
<fieldset class="checks"><legend>What counts (optional)</legend>
<div class="grid2">${FILTERS.map(([name, label, hint]) => html`<div>${field({ name, id: id(name), label, value: values(name), hint })}</div>`)}</div></fieldset>`
  }
  if (type === 'condition') {
    const rows = Math.min(
      MAX_CONDITIONS,
      Math.max(3, rowsIn(values, 'c', MAX_CONDITIONS + SPARE_ROWS) + SPARE_ROWS),
    )
    return html`<p class="muted">The rule declines an authorization when <strong>every</strong> condition holds. Amounts are in minor units (2000 is 20.00 USD); a list (is one of) is separated by commas; a pattern (matches) takes <code>*</code> and <code>?</code>. Leave a row's attribute and value empty to drop it.</p>
${Array.from(
  { length: rows },
  (_, i) => html`<fieldset class="checks"><legend>Condition ${i + 1}</legend><div class="grid2">
<div>${selectField(`c${i}_attribute`, 'Attribute', ATTRIBUTE_CHOICES, values(`c${i}_attribute`), { id: id(`c${i}-attribute`) })}</div>
<div>${selectField(`c${i}_operator`, 'Operator', OPERATOR_CHOICES, values(`c${i}_operator`) || 'is', { id: id(`c${i}-operator`) })}</div>
<div>${field({ name: `c${i}_value`, id: id(`c${i}-value`), label: 'Value', value: values(`c${i}_value`) })}</div></div></fieldset>`,
)}`
  }
  const rows = Math.min(
    MAX_MERCHANTS,
    Math.max(3, rowsIn(values, 'm', MAX_MERCHANTS + SPARE_ROWS) + SPARE_ROWS),
  )
  return html`<p class="muted">Only merchants matching one entry may be approved. An entry matches when every part it names does: the name as a pattern (<code>AMZN*</code>), the MCC and the country exactly. Leave a row empty to drop it.</p>
${Array.from(
  { length: rows },
  (_, i) => html`<fieldset class="checks"><legend>Merchant ${i + 1}</legend><div class="grid2">
<div>${field({ name: `m${i}_name`, id: id(`m${i}-name`), label: 'Name', value: values(`m${i}_name`), maxlength: 200 })}</div>
<div>${field({ name: `m${i}_mcc`, id: id(`m${i}-mcc`), label: 'MCC', value: values(`m${i}_mcc`), inputmode: 'numeric', maxlength: 4 })}</div>
<div>${field({ name: `m${i}_country`, id: id(`m${i}-country`), label: 'Country', value: values(`m${i}_country`), maxlength: 3, hint: 'Three letters.' })}</div></div></fieldset>`,
)}`
}

// ---------------------------------------------------------------------------------------------------------
// In words

function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? '24 hours' : `${seconds / 86_400} days`
  if (seconds % 3600 === 0) return seconds === 3600 ? 'hour' : `${seconds / 3600} hours`
  if (seconds % 60 === 0) return `${seconds / 60} minutes`
  return `${seconds} seconds`
}

/** A velocity limit's window in words: "a day (UTC)", "in any 24 hours". */
export function windowInWords(window: { type: string; seconds: number | null }): string {
  switch (window.type) {
    case 'day':
      return 'a day (UTC)'
    case 'week':
      return 'a week (from Monday, UTC)'
    case 'month':
      return 'a calendar month (UTC)'
    case 'year':
      return 'a calendar year (UTC)'
    case 'all_time':
      return 'in all'
    default:
      return `in any ${duration(window.seconds ?? 0)}`
  }
}

/** What a rule does, in one line (the list's and the rule page's summary). */
export function ruleSummary(rule: AuthorizationRuleView): string {
  const p = rule.parameters as Record<string, any>
  if (rule.type === 'velocity_limit') {
    const limits = [
      p.limit_count === null
        ? ''
        : `${p.limit_count} approved authorization${p.limit_count === 1 ? '' : 's'}`,
      p.limit_amount === null ? '' : `${p.limit_amount} in minor units`,
    ].filter((s) => s)
    return `At most ${limits.join(' and ')} ${windowInWords(p.window)}, per ${p.aggregate}`
  }
  if (rule.type === 'condition') {
    const n = (p.conditions as unknown[]).length
    return `Declines when ${n === 1 ? 'its condition holds' : `all ${n} conditions hold`}`
  }
  const n = (p.merchants as unknown[]).length
  return `Only ${n} merchant${n === 1 ? '' : 's'} may approve`
}

/** A rule's parameters in full: its limits and filters, its conditions or its merchants. */
export function parametersInWords(rule: AuthorizationRuleView): Html {
  const p = rule.parameters as Record<string, any>
  if (rule.type === 'velocity_limit') {
    const filters = FILTERS.filter(([name]) => (p.filters[name] as string[]).length > 0).map(
      ([name, label]) => html`<li>${label}: ${(p.filters[name] as string[]).join(', ')}</li>`,
    )
    return html`<p>${ruleSummary(rule)}.</p>${filters.length ? html`<ul>${filters}</ul>` : html`<p class="muted">Every authorization counts.</p>`}`
  }
  if (rule.type === 'condition') {
    return table({
      caption: 'Declines when every condition holds',
      rows: p.conditions as { attribute: string; operator: string; value: unknown }[],
      empty: 'No condition.',
      columns: [
        { header: 'Attribute', cell: (c) => html`<code>${c.attribute}</code>` },
        { header: 'Operator', cell: (c) => c.operator.replace(/_/g, ' ') },
        {
          header: 'Value',
          cell: (c) => (Array.isArray(c.value) ? c.value.join(', ') : String(c.value)),
        },
      ],
    })
  }
  const dash = (v: string | null) => v ?? html`<span class="muted">any</span>`
  return table({
    caption: 'Only these merchants may be approved',
    rows: p.merchants as { name: string | null; mcc: string | null; country: string | null }[],
    empty: 'No merchant.',
    columns: [
      { header: 'Name', cell: (m) => dash(m.name) },
      { header: 'MCC', cell: (m) => dash(m.mcc) },
      { header: 'Country', cell: (m) => dash(m.country) },
    ],
  })
}

/** Who a rule applies to: the level and its ids (linked), and what it excludes. */
export function scopeInWords(scope: AuthorizationRuleView['scope'], short = false): Html {
  const shown = short ? scope.ids.slice(0, 1) : scope.ids
  const more = scope.ids.length - shown.length
  const ids = shown.map((id, i) => html`${i ? ', ' : ''}${objectLink(id)}`)
  const excluded = scope.exclude_ids.length
    ? short
      ? html`; ${scope.exclude_ids.length} excluded`
      : html`; excluding ${scope.exclude_ids.map((id, i) => html`${i ? ', ' : ''}${objectLink(id)}`)}`
    : ''
  return html`${scope.level} ${ids}${more > 0 ? ` and ${more} more` : ''}${excluded}`
}
