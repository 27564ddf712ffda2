import { html, type Html, lines, raw } from '../../lib/html.js'
import { inline } from './reference-markdown.js'

/**
 * The reference's field tables: a schema of the OpenAPI document as rows of field, type and description, nested
 * objects as rows of their own (`delivery_address.city`, `spending_limits[].amount`). A component that the reference
 * describes in a section of its own (`Card`, `Event`: the objects responses answer) is linked, not repeated.
 */

type Schema = Record<string, any>

export interface SchemaContext {
  components: Record<string, Schema>
  /** Components with a section of their own, by name: the anchor to link to. */
  sections: Map<string, string>
}

const MAX_DEPTH = 5

export const refName = (schema: unknown): string | undefined => {
  const ref = (schema as Schema | undefined)?.$ref
  return typeof ref === 'string' ? ref.split('/').pop() : undefined
}

export function resolve(schema: unknown, ctx: SchemaContext): Schema {
  let s = schema as Schema | undefined
  for (let i = 0; i < 10 && s && typeof s.$ref === 'string'; i++) s = ctx.components[refName(s)!]
  return s && typeof s === 'object' ? s : {}
}

const isNull = (s: Schema) => s.type === 'null'

/** The branches of a union other than `null`, and whether `null` is one. */
function branches(s: Schema): { list: Schema[]; nullable: boolean } | undefined {
  const all = s.anyOf ?? s.oneOf
  if (!Array.isArray(all)) return undefined
  return { list: all.filter((b: Schema) => !isNull(b)), nullable: all.some(isNull) }
}

function typeNames(s: Schema): string[] {
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : []
  return types.filter((t) => t !== 'null')
}

const nullableOf = (s: Schema) => Array.isArray(s.type) && s.type.includes('null')

/** A short type label: `string (date-time)`, `array of Card`, `integer`, `object`, `Card` (linked). */
export function typeLabel(schema: unknown, ctx: SchemaContext): Html {
  const name = refName(schema)
  if (name) {
    const anchor = ctx.sections.get(name)
    if (anchor) return html`<a href="#${anchor}">${name}</a>`
    return typeLabel(resolve(schema, ctx), ctx)
  }
  const s = (schema ?? {}) as Schema
  const union = branches(s)
  if (union) {
    const parts = union.list.map((b) => typeLabel(b, ctx))
    const joined = parts.flatMap((p, i) => (i === 0 ? [p] : [html` or `, p]))
    return html`${joined}${union.nullable ? ' or null' : ''}`
  }
  const types = typeNames(s)
  let label: Html
  if (types.includes('array') || (!types.length && s.items)) {
    label = html`array of ${typeLabel(s.items ?? {}, ctx)}`
  } else {
    const base = types.length
      ? types.join(' or ')
      : s.properties || s.additionalProperties
        ? 'object'
        : 'const' in s
          ? typeof s.const
          : Array.isArray(s.enum)
            ? typeof s.enum[0]
            : 'any'
    label = html`${base}${s.format ? ` (${s.format})` : ''}`
  }
  return nullableOf(s) ? html`${label} or null` : label
}

const code = (v: unknown) => html`<code>${JSON.stringify(v)}</code>`

function joinHtml(items: Html[], separator = ', '): Html {
  return html`${items.flatMap((p, i) => (i === 0 ? [p] : [raw(separator), p]))}`
}

/** The schema's constraints in words: values, default, length, range, pattern. */
export function constraints(s: Schema): Html[] {
  const out: Html[] = []
  if ('const' in s) out.push(html`Always ${code(s.const)}.`)
  if (Array.isArray(s.enum))
    out.push(html`One of ${joinHtml(s.enum.filter((v: unknown) => v !== null).map(code))}.`)
  if (s.default !== undefined) out.push(html`Default ${code(s.default)}.`)
  const range = (min: unknown, max: unknown, unit: string) => {
    if (min !== undefined && max !== undefined)
      out.push(html`${min === max ? `Exactly ${min}` : `${min} to ${max}`}${unit}.`)
    else if (min !== undefined) out.push(html`At least ${min}${unit}.`)
    else if (max !== undefined) out.push(html`At most ${max}${unit}.`)
  }
  range(s.minLength, s.maxLength, ' characters')
  range(s.minimum, s.maximum, '')
  range(s.minItems, s.maxItems, ' items')
  range(s.minProperties, s.maxProperties, ' keys')
  if (typeof s.pattern === 'string') out.push(html`Pattern <code>${s.pattern}</code>.`)
  return out
}

export interface FieldRow {
  name: string
  depth: number
  type: Html
  required: boolean
  description: Html
}

/** The object (or object branches) a field's rows continue into, unless it is a component with its own section. */
function nestedObjects(schema: unknown, ctx: SchemaContext): { label?: string; s: Schema }[] {
  const name = refName(schema)
  if (name && ctx.sections.has(name)) return []
  const s = resolve(schema, ctx)
  const union = branches(s)
  if (union) {
    const objects = union.list.filter((b) => {
      const r = resolve(b, ctx)
      return r.properties && !(refName(b) && ctx.sections.has(refName(b)!))
    })
    return objects.map((b) => ({
      label: union.list.length > 1 ? (refName(b) ?? 'object') : undefined,
      s: resolve(b, ctx),
    }))
  }
  if (typeNames(s).includes('array') || s.items) {
    return nestedObjects(s.items, ctx)
  }
  return s.properties ? [{ s }] : []
}

function isArray(schema: unknown, ctx: SchemaContext): boolean {
  const s = resolve(schema, ctx)
  if (typeNames(s).includes('array') || s.items) return true
  const union = branches(s)
  return !!union && union.list.length === 1 && isArray(union.list[0], ctx)
}

/** Every field of an object schema, required ones first, nested objects' fields after their parent's row. */
export function fieldRows(
  schema: unknown,
  ctx: SchemaContext,
  prefix = '',
  depth = 0,
  seen: string[] = [],
): FieldRow[] {
  const s = resolve(schema, ctx)
  const required = new Set<string>(Array.isArray(s.required) ? s.required : [])
  const props = Object.entries<Schema>(s.properties ?? {})
  props.sort((a, b) => Number(required.has(b[0])) - Number(required.has(a[0])))
  const rows: FieldRow[] = []
  for (const [key, value] of props) {
    const own = resolve(value, ctx)
    const union = branches(own)
    const described = own.description ?? value.description
    const inner = union && union.list.length === 1 ? resolve(union.list[0], ctx) : own
    const words = [
      ...(described
        ? [inline(/[.!?:]$/.test(described.trim()) ? described : `${described}.`)]
        : []),
      ...constraints(inner.items && !inner.properties ? resolve(inner.items, ctx) : inner),
    ]
    rows.push({
      name: prefix + key,
      depth,
      type: typeLabel(value, ctx),
      required: required.has(key),
      description: joinHtml(words, ' '),
    })
    const ref = refName(value) ?? (union && union.list.length === 1 ? refName(union.list[0]) : '')
    if (depth + 1 >= MAX_DEPTH || (ref && seen.includes(ref))) continue
    const path = `${prefix}${key}${isArray(value, ctx) ? '[]' : ''}`
    for (const nested of nestedObjects(value, ctx)) {
      if (nested.label)
        rows.push({
          name: `${path} (${nested.label})`,
          depth: depth + 1,
          type: html`object`,
          required: false,
          description: html`When it is ${nested.label}:`,
        })
      rows.push(...fieldRows(nested.s, ctx, `${path}.`, depth + 1, ref ? [...seen, ref] : seen))
    }
  }
  return rows
}

/** A dotted name that may wrap after each dot (`spending_controls.<wbr>spending_limits[].<wbr>amount`). */
function breakable(name: string): Html {
  const parts = name.split('.')
  return html`${parts.map((p, i) => (i ? html`.<wbr>${p}` : html`${p}`))}`
}

/** A field table: on a phone its rows stack (`table.stack`), each cell labelled. */
export function fieldTable(rows: FieldRow[], caption: string): Html {
  if (rows.length === 0) return html``
  const body = rows.map(
    (r) =>
      html`<tr${r.depth ? raw(` class="d${Math.min(r.depth, 4)}"`) : ''}><td><code>${breakable(r.name)}</code>${r.required ? html` <span class="req">required</span>` : ''}</td><td data-label="type">${r.type}</td><td>${r.description}</td></tr>`,
  )
  return html`<table class="fields stack"><caption>${caption}</caption><thead><tr><th scope="col">field</th><th scope="col">type</th><th scope="col">description</th></tr></thead><tbody>
${lines(body)}</tbody></table>`
}
