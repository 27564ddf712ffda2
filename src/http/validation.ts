import type { FastifyInstance } from 'fastify'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { alpha3Of, isCountryCode } from '../lib/countries.js'
import { ApiError, fieldErrors, type FieldError } from './errors.js'

/** Bodies are validated strictly (no coercion, no stripping); query strings and params coerce from text. */
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // Errors carry their schema and value, so a schema's own `x-refusals` can word the answer (validationToApiError).
    verbose: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    strict: false,
  })
  addFormats(ajv)
  ajv.addFormat('country', { type: 'string', validate: isCountryCode })
  for (const name of ['date', 'date-time']) withYearFloor(ajv, name)
  return ajv
}

/**
 * Dates and timestamps from year 1000 on: RFC 3339 allows 0000–0999, but PostgreSQL has no year 0 and
 * the driver writes years below 100 as two digits (0001 would be stored as 2001).
 */
function withYearFloor(ajv: Ajv, name: string): void {
  const base = ajv.formats[name] as { validate: (value: string) => boolean }
  ajv.addFormat(name, {
    type: 'string',
    validate: (value: string) => base.validate(value) && Number(value.slice(0, 4)) >= 1000,
  })
}

const addFormats =
  (addFormatsModule as unknown as { default: (a: Ajv) => void }).default ?? addFormatsModule

const bodyAjv = makeAjv(false)
const queryAjv = makeAjv(true)

/** A lone high surrogate (not followed by a low one) or a lone low surrogate (not preceded by a high one). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Why PostgreSQL text cannot hold a string (the NUL character, an unpaired UTF-16 surrogate), or null when it can. */
function unstorable(text: string): 'nul' | 'surrogate' | null {
  if (text.includes('\u0000')) return 'nul'
  // isWellFormed (Node 20+) is a single linear scan, cheaper than a regular expression over every value.
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) return 'surrogate'
  return null
}

/** Whether PostgreSQL text can hold the string: for values read from elsewhere than a validated request part (a JWT claim). */
export function storableText(text: string): boolean {
  return unstorable(text) === null
}

const UNSTORABLE_MESSAGES = {
  nul: 'must not contain the NUL character (U+0000)',
  surrogate: 'must not contain an unpaired UTF-16 surrogate',
} as const

/** A key as a JSON pointer segment, with what cannot be stored or shown written as a `\uXXXX` escape (the param must be storable too). */
function pointerSegment(key: string): string {
  const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  return key
    .replace(/~/g, '~0')
    .replace(/\//g, '~1')
    .replace(/\u0000/g, escape)
    .replace(LONE_SURROGATE, escape)
}

/**
 * The JSON pointer of the first string or key PostgreSQL text cannot hold (the NUL character U+0000, an unpaired
 * UTF-16 surrogate such as a JSON `"\ud800"`), with the reason, or null. Such a value is refused as a parameter error
 * up front, for every field at any depth, instead of failing in the database.
 */
function unstorablePointer(
  value: unknown,
  pointer = '',
): { pointer: string; reason: 'nul' | 'surrogate' } | null {
  if (typeof value === 'string') {
    const reason = unstorable(value)
    return reason === null ? null : { pointer, reason }
  }
  if (value === null || typeof value !== 'object') return null
  for (const [key, child] of Object.entries(value)) {
    const at = `${pointer}/${pointerSegment(key)}`
    const reason = unstorable(key)
    if (reason !== null) return { pointer: at, reason }
    const found = unstorablePointer(child, at)
    if (found !== null) return found
  }
  return null
}

/** Query parameters typed as numbers: ajv's coercion would read `0x10`, `1e1` or `+7` through Number(). */
function numericProperties(schema: object): string[] {
  const properties =
    (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  return Object.entries(properties)
    .filter(([, p]) => p.type === 'integer' || p.type === 'number')
    .map(([name]) => name)
}

const DECIMAL = /^-?\d+(\.\d+)?$/

/** A failed validation of one field found before ajv runs, in the shape the error handler maps from ajv's. */
function failure(
  httpPart: string | undefined,
  instancePath: string,
  keyword: string,
  message: string,
) {
  const validation: Partial<ErrorObject>[] = [{ keyword, instancePath, params: {}, message }]
  return {
    error: Object.assign(new Error('validation failed'), {
      validation,
      validationContext: httpPart,
    }),
  }
}

/**
 * Fastify validator compiler (ajv caches compiled schemas by identity). Each schema is compiled on its route's first
 * request, not when the server starts: compiling every route's schemas was a fifth of the start's time.
 */
export function validatorCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  let fn: ValidateFunction | undefined
  const numeric = httpPart === 'querystring' ? numericProperties(schema) : []
  return (data: unknown) => {
    // A POST without a body validates as an empty object, so required fields report missing_parameter.
    // Fastify hands a missing body over as null; a JSON `null` body never gets here (the parser refuses it).
    const input = httpPart === 'body' && (data === undefined || data === null) ? {} : data
    const unfit = unstorablePointer(input)
    if (unfit !== null)
      return failure(httpPart, unfit.pointer, unfit.reason, UNSTORABLE_MESSAGES[unfit.reason])
    const notDecimal = numeric.find((name) => {
      const value = (input as Record<string, unknown> | undefined)?.[name]
      return typeof value === 'string' && !DECIMAL.test(value)
    })
    if (notDecimal !== undefined)
      return failure(
        httpPart,
        `/${notDecimal}`,
        'type',
        'must be a number written in decimal digits',
      )
    fn ??= (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema)
    if (fn(input)) return { value: input }
    return {
      error: Object.assign(new Error('validation failed'), {
        validation: fn.errors ?? [],
        validationContext: httpPart,
      }),
    }
  }
}

function pointerToParam(pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (/^\d+$/.test(part)) out += `[${part}]`
    else out += out ? `.${part}` : part
  }
  return out
}

function join(base: string, child: string): string {
  return base ? `${base}.${child}` : child
}

/** A money field: named an amount, or described in minor units. */
function isMoney(e: ErrorObject, param: string): boolean {
  const description = (e.parentSchema as { description?: string } | undefined)?.description ?? ''
  return /(^|[._])amount$/.test(param) || /minor units/i.test(description)
}

function describe(e: ErrorObject, param: string): string {
  if (
    e.keyword === 'type' &&
    (e.params as { type?: string }).type === 'integer' &&
    isMoney(e, param)
  ) {
    return 'must be an integer in minor units of the currency (1250 is 12.50 USD), not a string or a decimal'
  }
  switch (e.keyword) {
    case 'enum':
      return `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`
    case 'const':
      return `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`
    case 'format':
    case 'minLength':
    case 'maxLength': {
      if ((e.parentSchema as { format?: string } | undefined)?.format !== 'country')
        return e.message ?? 'is invalid'
      const alpha3 = typeof e.data === 'string' ? alpha3Of(e.data) : undefined
      return alpha3
        ? `must be a three-letter ISO 3166-1 country code: ${e.data} is ${alpha3}`
        : 'must be a three-letter ISO 3166-1 country code'
    }
    default:
      return e.message ?? 'is invalid'
  }
}

/**
 * A schema's own wording for a string it refuses, on the schema whose keyword failed: by value, `x-refusals: { business:
 * 'Business cardholders are not supported; …' }`; for any other value an `enum` or `const` refuses, `x-refusal`, a
 * sentence where `{value}` stands for the value (an event subscription naming the catalogue page).
 */
function refusalOf(e: ErrorObject): string | undefined {
  const schema = e.parentSchema as
    | { 'x-refusals'?: Record<string, string>; 'x-refusal'?: string }
    | undefined
  if (typeof e.data !== 'string') return undefined
  const refusals = schema?.['x-refusals']
  if (refusals && Object.hasOwn(refusals, e.data)) return refusals[e.data]
  const template = schema?.['x-refusal']
  if (typeof template === 'string' && (e.keyword === 'enum' || e.keyword === 'const'))
    return template.replace('{value}', () => e.data as string)
  return undefined
}

/**
 * An object schema's word for a property it does not take but another API's habit sends, by name:
 * `x-unknown-hints: { status: 'A card's status changes through POST /v1/cards/{id}/freeze, …' }`.
 */
function hintOf(e: ErrorObject, property: string): string | undefined {
  const hints = (e.parentSchema as { 'x-unknown-hints'?: Record<string, string> } | undefined)?.[
    'x-unknown-hints'
  ]
  return hints && Object.hasOwn(hints, property) ? hints[property] : undefined
}

/** Turns schema errors into the catalogue's codes: one field → its own code; several → invalid_parameter + errors[]. */
export function validationToApiError(errors: ErrorObject[], part: string | undefined): ApiError {
  const byParam = new Map<string, FieldError>()
  // A union of literals fails every branch with `const`: gathered, they read "must be one of: …".
  const allowed = new Map<string, unknown[]>()
  for (const e of errors) {
    if (e.keyword === 'const') {
      const key = pointerToParam(e.instancePath)
      allowed.set(key, [
        ...(allowed.get(key) ?? []),
        (e.params as { allowedValue: unknown }).allowedValue,
      ])
    }
  }
  for (const e of errors) {
    const base = pointerToParam(e.instancePath)
    let field: FieldError
    if (e.keyword === 'required') {
      const param = join(base, (e.params as { missingProperty: string }).missingProperty)
      field = { code: 'missing_parameter', param, message: `Missing required parameter: ${param}.` }
    } else if (e.keyword === 'additionalProperties') {
      const name = (e.params as { additionalProperty: string }).additionalProperty
      const param = join(base, name)
      const hint = hintOf(e, name)
      field = {
        code: 'unknown_parameter',
        param,
        message: `Unknown parameter: ${param}.${hint ? ` ${hint}` : ''}`,
      }
    } else if (base === '' && part === 'body') {
      return new ApiError('invalid_request_body', {
        message: 'The request body must be a JSON object.',
      })
    } else {
      field = {
        code: 'invalid_parameter',
        param: base,
        message: refusalOf(e) ?? `Invalid ${base || part}: ${describe(e, base)}.`,
      }
    }
    // anyOf/oneOf branches repeat the same field; the first finding per field is the useful one.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      const values = allowed.get(field.param)
      if (values && values.length > 1 && byParam.get(field.param)?.code === 'invalid_parameter') {
        byParam.set(field.param, {
          ...field,
          message: `Invalid ${field.param}: must be one of: ${values.map((v) => String(v)).join(', ')}.`,
        })
      } else if (!byParam.has(field.param)) {
        byParam.set(field.param, { ...field, message: `Invalid ${field.param}.` })
      }
      continue
    }
    const existing = byParam.get(field.param)
    if (!existing || existing.message.endsWith(`Invalid ${field.param}.`))
      byParam.set(field.param, field)
  }
  return fieldErrors([...byParam.values()])
}

/** The query schema of an API operation that takes no query parameters: any one given is unknown_parameter. */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false }

/**
 * Every query schema of the API (/v1, /operator/v1) is closed, like every body schema: an operation that
 * takes no query parameters answers `unknown_parameter` for any it is given rather than ignore it.
 * Registered before the routes, as Fastify applies onRoute hooks to routes added after them.
 */
export function installClosedQueries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!/^\/(v1|operator)\//.test(route.url)) return
    route.schema = route.schema ?? {}
    if (route.schema.querystring === undefined) route.schema.querystring = NO_QUERY
  })
}

/**
 * Validates a request body against its route's schema outside HTTP (the console's forms call the same services
 * as /v1): answers the body (defaults applied) or throws the ApiError /v1 would answer for it.
 */
export function checkBody<T>(schema: object, body: unknown): T {
  const result = validatorCompiler({ schema, httpPart: 'body' })(body)
  if ('error' in result && result.error) {
    const e = result.error as Error & { validation: ErrorObject[]; validationContext?: string }
    throw validationToApiError(e.validation, e.validationContext)
  }
  return (result as { value: T }).value
}
