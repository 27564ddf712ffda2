/**
 * Rewrites the unions TypeBox produces into the shapes readers and renderers show best, with the same meaning:
 * a union of literals (`anyOf` of single-value enums, `Type.Union([Type.Literal('virtual'), …])`) becomes one
 * `enum`, and a simple type or null (`Type.Union([Type.String(), Type.Null()])`) becomes a `type` array. A reference
 * page then lists `virtual`, `physical` as the field's values and says "string or null" instead of offering tabs.
 */

type Schema = Record<string, unknown>

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null'])
/** Keywords that make a branch more than a plain typed value: such a union stays as it is. */
const COMPOSITE = [
  '$ref',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'enum',
  'const',
  'title',
  '$id',
]
const SCHEMA_MAPS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
] as const
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const
const SCHEMA_ONE = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedProperties',
  'unevaluatedItems',
] as const

const isSchema = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The values a branch allows when it is only a literal (or a set of them): `{type, enum}`, `{const}` or `{type: 'null'}`. */
function literalValues(branch: Schema): { values: unknown[]; types: string[] } | null {
  const keys = Object.keys(branch)
  if (keys.some((k) => k !== 'type' && k !== 'enum' && k !== 'const')) return null
  if (branch.type === 'null' && keys.length === 1) return { values: [null], types: ['null'] }
  if (typeof branch.type !== 'string' || !PRIMITIVES.has(branch.type)) return null
  if (Array.isArray(branch.enum) && branch.const === undefined)
    return { values: branch.enum, types: [branch.type] }
  if (branch.const !== undefined && branch.enum === undefined)
    return { values: [branch.const], types: [branch.type] }
  return null
}

function typeOrTypes(types: string[]): string | string[] {
  const unique = [...new Set(types)]
  return unique.length === 1 ? unique[0] : unique
}

/** One union, its branches already simplified: a single `enum`, a nullable type, or the union unchanged. */
function simplifyUnion(schema: Schema): Schema {
  const branches = schema.anyOf
  if (!Array.isArray(branches) || branches.length < 2 || !branches.every(isSchema)) return schema
  if (
    schema.type !== undefined ||
    schema.enum !== undefined ||
    schema.const !== undefined ||
    schema.oneOf !== undefined ||
    schema.allOf !== undefined
  )
    return schema
  const { anyOf: _anyOf, ...rest } = schema

  const literals = branches.map(literalValues)
  if (literals.every((l) => l !== null)) {
    const values = literals.flatMap((l) => l!.values)
    if (new Set(values).size === values.length)
      return { type: typeOrTypes(literals.flatMap((l) => l!.types)), enum: values, ...rest }
  }

  if (branches.length === 2) {
    const nullAt = branches.findIndex((b) => b.type === 'null' && Object.keys(b).length === 1)
    const other = branches[1 - nullAt]
    if (
      nullAt >= 0 &&
      typeof other.type === 'string' &&
      other.type !== 'null' &&
      !COMPOSITE.some((k) => k in other)
    ) {
      return { ...other, ...rest, type: [other.type, 'null'] }
    }
  }
  return schema
}

/** A copy of a schema with every union inside it simplified, innermost first; examples and defaults are left alone. */
export function simplifySchema(value: unknown): unknown {
  if (!isSchema(value)) return value
  const out: Schema = { ...value }
  for (const key of SCHEMA_MAPS) {
    if (isSchema(out[key]))
      out[key] = Object.fromEntries(
        Object.entries(out[key] as Schema).map(([k, v]) => [k, simplifySchema(v)]),
      )
  }
  for (const key of SCHEMA_LISTS)
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(simplifySchema)
  for (const key of SCHEMA_ONE) if (isSchema(out[key])) out[key] = simplifySchema(out[key])
  return simplifyUnion(out)
}

/** Simplifies every schema of the document: components, parameters, request and response bodies, response headers. */
export function simplifyDocumentSchemas(doc: Record<string, any>): void {
  const schemas = doc.components?.schemas as Record<string, unknown> | undefined
  if (schemas)
    for (const name of Object.keys(schemas)) schemas[name] = simplifySchema(schemas[name])
  const media = (content: Record<string, any> | undefined) => {
    for (const m of Object.values<Record<string, any>>(content ?? {}))
      if (m?.schema) m.schema = simplifySchema(m.schema)
  }
  for (const item of Object.values<Record<string, any>>(doc.paths ?? {})) {
    for (const op of Object.values<Record<string, any>>(item)) {
      if (!op || typeof op !== 'object') continue
      for (const p of op.parameters ?? []) if (p?.schema) p.schema = simplifySchema(p.schema)
      media(op.requestBody?.content)
      for (const response of Object.values<Record<string, any>>(op.responses ?? {})) {
        media(response?.content)
        for (const h of Object.values<Record<string, any>>(response?.headers ?? {}))
          if (h?.schema) h.schema = simplifySchema(h.schema)
      }
    }
  }
}
