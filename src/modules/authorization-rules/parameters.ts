/**
 * A rule's `parameters` as sent, read against its type: the normalized value (every key present, codes upper-cased,
 * duplicates dropped) or every failing field at once, each named by its full path (`parameters.window.type`,
 * `parameters.conditions[0].operator`, `parameters.filters.include_mccs[2]`). The route's schema takes `parameters` as
 * any object, because its shape depends on `type` (and, on PATCH, on the stored rule's type): the fields are read
 * here, with the same codes the schema answers elsewhere (missing_parameter, unknown_parameter, invalid_parameter).
 */
import { type ErrorCode, type FieldError, fieldErrors } from '../../http/errors.js'
import { isCountryCode } from '../../lib/countries.js'
import { knownCurrency } from '../../lib/currencies.js'
import {
  AGGREGATES,
  ATTRIBUTES,
  type Attribute,
  type Condition,
  type ConditionValue,
  LIST_OPERATORS,
  type MerchantMatcher,
  NUMBER_ATTRIBUTES,
  OPERATORS,
  type Operator,
  ORDER_OPERATORS,
  type RuleParameters,
  type RuleType,
  type RuleWindow,
  type VelocityFilters,
  WINDOW_TYPES,
} from './rule.js'

/** The largest amount a limit or a condition names: 10^12 minor units, as every amount of the API. */
export const MAX_RULE_AMOUNT = 1_000_000_000_000
export const MAX_LIMIT_COUNT = 1_000_000
/** A rolling window lasts from a minute to 365 days. */
export const MIN_ROLLING_SECONDS = 60
export const MAX_ROLLING_SECONDS = 365 * 24 * 60 * 60
export const MAX_CONDITIONS = 20
export const MAX_LIST_VALUES = 500
/** A filter's countries and currencies: at most every code there is. */
export const MAX_COUNTRIES = 300
export const MAX_CURRENCIES = 200
export const MAX_MERCHANTS = 500
export const MAX_TEXT = 200

const FILTER_KEYS = [
  'include_mccs',
  'exclude_mccs',
  'include_countries',
  'exclude_countries',
  'merchant_currencies',
] as const

type Obj = Record<string, unknown>

/** Collects every failing field of one `parameters` value. */
class Reader {
  readonly fields: FieldError[] = []

  fail(code: ErrorCode, param: string, message: string): undefined {
    this.fields.push({ code, param, message })
    return undefined
  }

  invalid(param: string, message: string): undefined {
    return this.fail('invalid_parameter', param, `Invalid ${param}: ${message}.`)
  }

  /** `value` as an object holding only `required` and `optional` keys (each missing or unknown one is a field). */
  object(value: unknown, param: string, required: string[], optional: string[]): Obj | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return this.invalid(param, 'must be an object')
    const obj = value as Obj
    const known = new Set([...required, ...optional])
    for (const key of Object.keys(obj))
      if (!known.has(key))
        this.fail('unknown_parameter', `${param}.${key}`, `Unknown parameter: ${param}.${key}.`)
    for (const key of required)
      if (obj[key] === undefined)
        this.fail(
          'missing_parameter',
          `${param}.${key}`,
          `Missing required parameter: ${param}.${key}.`,
        )
    return obj
  }

  oneOf<T extends string>(value: unknown, param: string, allowed: readonly T[]): T | undefined {
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
      return value as T
    return this.invalid(param, `must be one of: ${allowed.join(', ')}`)
  }

  integer(value: unknown, param: string, min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value))
      return this.invalid(param, 'must be an integer')
    if (value < min || value > max) return this.invalid(param, `must be between ${min} and ${max}`)
    return value
  }

  /** A list of at most `max` items, each read by `item` (failures named `param[i]`); duplicates dropped. */
  list<T>(
    value: unknown,
    param: string,
    max: number,
    item: (v: unknown, p: string) => T | undefined,
    min = 0,
  ): T[] | undefined {
    if (!Array.isArray(value)) return this.invalid(param, 'must be a list')
    if (value.length < min) return this.invalid(param, `must hold at least ${min} item(s)`)
    if (value.length > max) return this.invalid(param, `must hold at most ${max} items`)
    const out: T[] = []
    value.forEach((v, i) => {
      const read = item(v, `${param}[${i}]`)
      if (read !== undefined && !out.includes(read)) out.push(read)
    })
    return out
  }

  text(value: unknown, param: string): string | undefined {
    if (typeof value !== 'string') return this.invalid(param, 'must be a string')
    if (value.length < 1 || value.length > MAX_TEXT)
      return this.invalid(param, `must be 1 to ${MAX_TEXT} characters`)
    return value
  }

  mcc(value: unknown, param: string): string | undefined {
    if (typeof value !== 'string' || !/^[0-9]{4}$/.test(value))
      return this.invalid(param, 'must be a four-digit merchant category code')
    return value
  }

  country(value: unknown, param: string): string | undefined {
    if (typeof value !== 'string' || !isCountryCode(value))
      return this.invalid(param, 'must be a three-letter ISO 3166-1 country code')
    return value.toUpperCase()
  }

  currency(value: unknown, param: string): string | undefined {
    const code = typeof value === 'string' ? value.toUpperCase() : ''
    if (!/^[A-Z]{3}$/.test(code) || !knownCurrency(code))
      return this.invalid(param, 'must be a three-letter ISO 4217 currency code the service knows')
    return code
  }
}

function readWindow(r: Reader, value: unknown, param: string): RuleWindow | undefined {
  const obj = r.object(value, param, ['type'], ['seconds'])
  if (!obj) return undefined
  const type = obj.type === undefined ? undefined : r.oneOf(obj.type, `${param}.type`, WINDOW_TYPES)
  if (type === 'rolling') {
    if (obj.seconds === undefined || obj.seconds === null)
      return r.fail(
        'missing_parameter',
        `${param}.seconds`,
        `Missing required parameter: ${param}.seconds (a rolling window needs its length).`,
      )
    const seconds = r.integer(
      obj.seconds,
      `${param}.seconds`,
      MIN_ROLLING_SECONDS,
      MAX_ROLLING_SECONDS,
    )
    return seconds === undefined ? undefined : { type, seconds }
  }
  if (obj.seconds !== undefined && obj.seconds !== null) {
    if (type !== undefined)
      r.invalid(`${param}.seconds`, `only a rolling window has a length; a ${type} window has none`)
    return undefined
  }
  return type === undefined ? undefined : { type, seconds: null }
}

function readFilters(r: Reader, value: unknown, param: string): VelocityFilters | undefined {
  const empty: VelocityFilters = {
    include_mccs: [],
    exclude_mccs: [],
    include_countries: [],
    exclude_countries: [],
    merchant_currencies: [],
  }
  if (value === undefined || value === null) return empty
  const obj = r.object(value, param, [], [...FILTER_KEYS])
  if (!obj) return undefined
  const mccs = (key: 'include_mccs' | 'exclude_mccs') =>
    obj[key] === undefined
      ? []
      : r.list(obj[key], `${param}.${key}`, MAX_LIST_VALUES, (v, p) => r.mcc(v, p))
  const countries = (key: 'include_countries' | 'exclude_countries') =>
    obj[key] === undefined
      ? []
      : r.list(obj[key], `${param}.${key}`, MAX_COUNTRIES, (v, p) => r.country(v, p))
  const filters = {
    include_mccs: mccs('include_mccs'),
    exclude_mccs: mccs('exclude_mccs'),
    include_countries: countries('include_countries'),
    exclude_countries: countries('exclude_countries'),
    merchant_currencies:
      obj.merchant_currencies === undefined
        ? []
        : r.list(obj.merchant_currencies, `${param}.merchant_currencies`, MAX_CURRENCIES, (v, p) =>
            r.currency(v, p),
          ),
  }
  // As the card's own controls: one list per kind, the allowed or the refused ones.
  for (const kind of ['mccs', 'countries'] as const) {
    if (filters[`include_${kind}`]?.length && filters[`exclude_${kind}`]?.length)
      r.invalid(
        `${param}.exclude_${kind}`,
        `include_${kind} and exclude_${kind} cannot both be set`,
      )
  }
  const values = Object.values(filters)
  if (values.some((v) => v === undefined)) return undefined
  return filters as VelocityFilters
}

function readVelocity(r: Reader, value: unknown, param: string) {
  const obj = r.object(
    value,
    param,
    ['window', 'aggregate'],
    ['limit_amount', 'limit_count', 'filters'],
  )
  if (!obj) return undefined
  const window = obj.window === undefined ? undefined : readWindow(r, obj.window, `${param}.window`)
  const aggregate =
    obj.aggregate === undefined
      ? undefined
      : r.oneOf(obj.aggregate, `${param}.aggregate`, AGGREGATES)
  const amount = obj.limit_amount ?? null
  const count = obj.limit_count ?? null
  const limitAmount =
    amount === null ? null : r.integer(amount, `${param}.limit_amount`, 1, MAX_RULE_AMOUNT)
  const limitCount =
    count === null ? null : r.integer(count, `${param}.limit_count`, 1, MAX_LIMIT_COUNT)
  if (amount === null && count === null)
    r.invalid(
      `${param}.limit_amount`,
      'a velocity limit needs limit_amount (minor units of the account currency), limit_count (approved ' +
        'authorizations) or both',
    )
  const filters = readFilters(r, obj.filters, `${param}.filters`)
  if (
    !window ||
    !aggregate ||
    limitAmount === undefined ||
    limitCount === undefined ||
    (limitAmount === null && limitCount === null) ||
    !filters
  )
    return undefined
  return { window, aggregate, limit_amount: limitAmount, limit_count: limitCount, filters }
}

/** One value of a text attribute for `is`, `is_not` and the lists. */
function textValue(r: Reader, attribute: Attribute, value: unknown, param: string) {
  switch (attribute) {
    case 'mcc':
      return r.mcc(value, param)
    case 'merchant_country':
      return r.country(value, param)
    case 'merchant_currency':
      return r.currency(value, param)
    default:
      return r.text(value, param)
  }
}

/** A wildcard pattern (`*` any run of characters, `?` one): upper-cased codes, as the values they are matched with. */
function pattern(r: Reader, attribute: Attribute, value: unknown, param: string) {
  const text = r.text(value, param)
  if (text === undefined) return undefined
  if (attribute === 'mcc' && !/^[0-9*?]+$/.test(text))
    return r.invalid(param, 'an mcc pattern holds digits, * and ? only')
  if (
    (attribute === 'merchant_country' || attribute === 'merchant_currency') &&
    !/^[A-Za-z*?]+$/.test(text)
  )
    return r.invalid(param, `a ${attribute} pattern holds letters, * and ? only`)
  return attribute === 'merchant_name' ? text : text.toUpperCase()
}

function conditionValue(
  r: Reader,
  attribute: Attribute,
  operator: Operator,
  value: unknown,
  param: string,
): ConditionValue | undefined {
  const numeric = (NUMBER_ATTRIBUTES as readonly string[]).includes(attribute)
  const one = (v: unknown, p: string) =>
    numeric ? r.integer(v, p, 0, MAX_RULE_AMOUNT) : textValue(r, attribute, v, p)
  if (LIST_OPERATORS.includes(operator)) {
    if (!Array.isArray(value)) return r.invalid(param, `${operator} takes a list of values`)
    return r.list(value, param, MAX_LIST_VALUES, one, 1) as ConditionValue | undefined
  }
  if (Array.isArray(value))
    return r.invalid(param, `${operator} takes one value; is_one_of and is_not_one_of take a list`)
  if (operator === 'matches') return pattern(r, attribute, value, param)
  return one(value, param)
}

function readCondition(r: Reader, value: unknown, param: string): Condition | undefined {
  const obj = r.object(value, param, ['attribute', 'operator', 'value'], [])
  if (!obj) return undefined
  const attribute =
    obj.attribute === undefined
      ? undefined
      : r.oneOf(obj.attribute, `${param}.attribute`, ATTRIBUTES)
  let operator =
    obj.operator === undefined ? undefined : r.oneOf(obj.operator, `${param}.operator`, OPERATORS)
  if (attribute !== undefined && operator !== undefined) {
    const numeric = (NUMBER_ATTRIBUTES as readonly string[]).includes(attribute)
    if (numeric && operator === 'matches')
      operator = r.invalid(
        `${param}.operator`,
        `${attribute} is a number: matches takes text attributes`,
      )
    else if (!numeric && ORDER_OPERATORS.includes(operator))
      operator = r.invalid(
        `${param}.operator`,
        `${attribute} is text: ${operator} takes number attributes (amount, merchant_amount, card_age_seconds, ` +
          'authorization_count_1h, decline_count_1h)',
      )
  }
  if (attribute === undefined || operator === undefined || obj.value === undefined) return undefined
  const v = conditionValue(r, attribute, operator, obj.value, `${param}.value`)
  return v === undefined ? undefined : { attribute, operator, value: v }
}

function readMerchant(r: Reader, value: unknown, param: string): MerchantMatcher | undefined {
  const obj = r.object(value, param, [], ['name', 'mcc', 'country'])
  if (!obj) return undefined
  const name = obj.name == null ? null : r.text(obj.name, `${param}.name`)
  const mcc = obj.mcc == null ? null : r.mcc(obj.mcc, `${param}.mcc`)
  const country = obj.country == null ? null : r.country(obj.country, `${param}.country`)
  if (name === null && mcc === null && country === null)
    return r.invalid(param, 'name a merchant by name, mcc or country (any of them, together)')
  if (name === undefined || mcc === undefined || country === undefined) return undefined
  return { name, mcc, country }
}

/**
 * `parameters` read for `type`: the normalized parameters, or the ApiError naming every failing field under
 * `param` (one field keeps its own code; several answer invalid_parameter with `errors`).
 */
export function readParameters(
  type: RuleType,
  value: unknown,
  param = 'parameters',
): RuleParameters {
  const r = new Reader()
  let read: RuleParameters | undefined
  if (type === 'velocity_limit') {
    const parameters = readVelocity(r, value, param)
    if (parameters) read = { type, parameters }
  } else if (type === 'condition') {
    const obj = r.object(value, param, ['conditions'], [])
    const conditions =
      obj?.conditions === undefined
        ? undefined
        : r.list(
            obj.conditions,
            `${param}.conditions`,
            MAX_CONDITIONS,
            (v, p) => readCondition(r, v, p),
            1,
          )
    if (conditions) read = { type, parameters: { conditions } }
  } else {
    const obj = r.object(value, param, ['merchants'], [])
    const merchants =
      obj?.merchants === undefined
        ? undefined
        : r.list(
            obj.merchants,
            `${param}.merchants`,
            MAX_MERCHANTS,
            (v, p) => readMerchant(r, v, p),
            1,
          )
    if (merchants) read = { type, parameters: { merchants } }
  }
  if (r.fields.length > 0) throw fieldErrors(r.fields)
  if (!read) throw fieldErrors([{ code: 'invalid_parameter', param, message: `Invalid ${param}.` }])
  return read
}
