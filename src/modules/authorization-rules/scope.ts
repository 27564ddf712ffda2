/**
 * A rule's scope as sent, checked against the caller's objects: every id has the level's prefix and names an object of
 * the caller's organization and environment, and every exclusion is a card, account or cardholder under the scope.
 * Each failing id is a field (`scope.ids[1]`, `scope.exclude_ids[0]`), all reported at once; an id of the caller's
 * other environment answers environment_mismatch, as an id in a body does everywhere.
 */
import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { ApiError, type FieldError, isApiError } from '../../http/errors.js'
import { isId } from '../../lib/ids.js'
import { requireAccount } from '../accounts/index.js'
import { requireCardholder } from '../cardholders/index.js'
import { requireCard } from '../cards/index.js'
import { findProgram } from '../programs/index.js'
import { LEVEL_PREFIX, type RuleScope, type ScopeLevel } from './rule.js'

/** At most this many ids in `scope.ids`, and as many in `scope.exclude_ids`. */
export const MAX_SCOPE_IDS = 100

/** What may be excluded under each level: what lies under it. A card has nothing under it. */
const EXCLUDABLE: Record<ScopeLevel, readonly ScopeLevel[]> = {
  program: ['account', 'cardholder', 'card'],
  account: ['card'],
  cardholder: ['account', 'card'],
  card: [],
}

/** An object named in a scope, with what it belongs to (the parts its kind has). */
interface Found {
  program_id?: string
  account_id?: string
  cardholder_id?: string
}

const NOT_FOUND = new Set([
  'program_not_found',
  'account_not_found',
  'cardholder_not_found',
  'card_not_found',
])

function kindOf(id: string): ScopeLevel | null {
  for (const level of Object.keys(LEVEL_PREFIX) as ScopeLevel[])
    if (isId(LEVEL_PREFIX[level], id)) return level
  return null
}

const article = (level: ScopeLevel) => (level === 'account' ? 'an' : 'a')

/**
 * The object `id` of `kind`, or null when the caller has none (another organization's answers the same); the caller's
 * object of the other environment throws environment_mismatch naming `param`.
 */
async function lookup(
  db: Db,
  ctx: Scope,
  kind: ScopeLevel,
  id: string,
  param: string,
): Promise<Found | null> {
  if (kind === 'program') {
    const row = await findProgram(db, id)
    if (!row || row.organization_id !== ctx.organizationId) return null
    if (row.environment !== ctx.environment)
      throw new ApiError('environment_mismatch', {
        param,
        message: `${param} belongs to the ${row.environment} environment; use a ${row.environment} token.`,
      })
    return { program_id: row.id }
  }
  try {
    if (kind === 'account') return await requireAccount(db, ctx, id, param)
    if (kind === 'cardholder') {
      await requireCardholder(db, ctx, id, param)
      return {}
    }
    return await requireCard(db, ctx, id, param)
  } catch (err) {
    if (isApiError(err) && NOT_FOUND.has(err.code)) return null
    if (isApiError(err) && err.code === 'environment_mismatch')
      throw new ApiError('environment_mismatch', { param, message: `${param}: ${err.message}` })
    throw err
  }
}

/** Whether the object excluded lies under one of the scope's ids. */
function isUnder(
  level: ScopeLevel,
  ids: readonly string[],
  kind: ScopeLevel,
  found: Found,
): boolean {
  if (level === 'program') return kind === 'cardholder' || ids.includes(found.program_id!)
  if (level === 'account') return ids.includes(found.account_id!)
  if (level === 'cardholder') return ids.includes(found.cardholder_id!)
  return false
}

/**
 * The scope normalized (duplicates dropped, order kept), or the fields that fail: appended to `fields`, so the caller
 * reports them with the body's other failing fields.
 */
export async function checkScope(
  db: Db,
  ctx: Scope,
  input: { level: ScopeLevel; ids: string[]; exclude_ids?: string[] },
  fields: FieldError[],
): Promise<RuleScope> {
  const { level } = input
  const invalid = (param: string, message: string) =>
    fields.push({ code: 'invalid_parameter', param, message: `Invalid ${param}: ${message}.` })
  const prefix = LEVEL_PREFIX[level]
  for (const [i, id] of input.ids.entries()) {
    const param = `scope.ids[${i}]`
    if (!isId(prefix, id)) invalid(param, `must be ${article(level)} ${level} id (${prefix}_…)`)
    else if (!(await lookup(db, ctx, level, id, param)))
      invalid(param, `${id} is not ${article(level)} ${level} of your organization`)
  }
  const excludable = EXCLUDABLE[level]
  for (const [i, id] of (input.exclude_ids ?? []).entries()) {
    const param = `scope.exclude_ids[${i}]`
    const kind = kindOf(id)
    if (excludable.length === 0) {
      invalid(param, 'a rule on cards has nothing under it to exclude')
    } else if (kind === null || !excludable.includes(kind)) {
      invalid(
        param,
        `under ${article(level)} ${level}, exclude ${excludable.map((k) => `${k} (${LEVEL_PREFIX[k]}_…)`).join(', ')} ids`,
      )
    } else {
      const found = await lookup(db, ctx, kind, id, param)
      if (!found) invalid(param, `${id} is not ${article(kind)} ${kind} of your organization`)
      else if (!isUnder(level, input.ids, kind, found))
        invalid(param, `${id} is not under any of the ${level} ids of the rule's scope`)
    }
  }
  return {
    level,
    ids: [...new Set(input.ids)],
    exclude_ids: [...new Set(input.exclude_ids ?? [])],
  }
}
