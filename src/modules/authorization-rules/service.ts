import type { AppDeps } from '../../app-deps.js'
import { type InSameTx, withTx } from '../../db/tx.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError, type FieldError, fieldErrors, fieldsOf, isApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { type ListResult, paginate } from '../../http/pagination.js'
import { canonicalJson } from '../../lib/canonical-json.js'
import { isId, newId } from '../../lib/ids.js'
import { requireCard } from '../cards/index.js'
import { emit } from '../events/index.js'
import type { CardTarget } from './evaluate.js'
import { readParameters } from './parameters.js'
import { presentRule } from './present.js'
import * as repo from './repo.js'
import type { RuleParameters } from './rule.js'
import type {
  AuthorizationRuleCreateBody,
  AuthorizationRuleListQueryType,
  AuthorizationRuleUpdateBody,
  AuthorizationRuleView,
} from './schemas.js'
import { checkScope } from './scope.js'

export type { RuleRow } from './repo.js'

/** The caller's live rule by id: another organization's, or a deleted one, answers like a missing one. */
export async function ownedRule(deps: AppDeps, ctx: RequestCtx, id: string): Promise<repo.RuleRow> {
  const row = isId('arl', id) ? await repo.findRule(deps.db, id) : undefined
  return requireOwned(row, ctx, 'authorization_rule_not_found')
}

/** `parameters` read for `type`, its failing fields added to `fields` instead of thrown. */
function parametersOf(
  type: RuleParameters['type'],
  value: unknown,
  fields: FieldError[],
): RuleParameters | undefined {
  try {
    return readParameters(type, value)
  } catch (err) {
    if (!isApiError(err)) throw err
    fields.push(...fieldsOf(err))
    return undefined
  }
}

/**
 * POST: the parameters are read against the type and the scope's ids against the caller's objects; every failing
 * field is answered at once. The rule starts enabled; `authorization_rule.created` is written with it.
 * `inSameTx` runs in the creation's transaction (the console's audit row).
 */
export async function createRule(
  deps: AppDeps,
  ctx: RequestCtx,
  body: AuthorizationRuleCreateBody,
  inSameTx?: InSameTx<AuthorizationRuleView>,
): Promise<AuthorizationRuleView> {
  const fields: FieldError[] = []
  const rule = parametersOf(body.type, body.parameters, fields)
  const scope = await checkScope(deps.db, ctx, body.scope, fields)
  if (fields.length > 0 || !rule) throw fieldErrors(fields)
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const row = await repo.insertRule(trx, {
      id: newId('arl', now),
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      name: body.name,
      scope,
      rule,
      mode: body.mode,
      now,
    })
    const view = presentRule(row)
    await emit(trx, ctx, 'authorization_rule.created', view, now)
    await inSameTx?.(trx, view)
    return view
  })
}

export async function retrieveRule(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<AuthorizationRuleView> {
  return presentRule(await ownedRule(deps, ctx, id))
}

/** The card a `card_id` filter names, when it is the caller's (any other id matches nothing). */
async function filterCard(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
): Promise<CardTarget | null> {
  try {
    return await requireCard(deps.db, ctx, cardId, 'card_id')
  } catch (err) {
    if (isApiError(err) && err.code === 'card_not_found') return null
    throw err
  }
}

/** GET: newest first; `card_id` keeps the rules that apply to that card, enabled or not. */
export async function listRules(
  deps: AppDeps,
  ctx: RequestCtx,
  query: AuthorizationRuleListQueryType,
): Promise<ListResult<AuthorizationRuleView>> {
  const card = query.card_id === undefined ? undefined : await filterCard(deps, ctx, query.card_id)
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/authorization_rules',
    page: query,
    sortKey: (r: repo.RuleRow) => r.id,
    fetch: async (bounds) =>
      card === null
        ? []
        : repo.listRules(deps.db, ctx.organizationId, ctx.environment, bounds, card),
    present: presentRule,
  })
}

/**
 * PATCH: name, parameters (read against the rule's type, replacing the ones held), mode and status. The change and
 * `authorization_rule.updated` are written under the row lock; a PATCH that changes nothing writes neither.
 */
export async function updateRule(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  body: AuthorizationRuleUpdateBody,
  inSameTx?: InSameTx<AuthorizationRuleView>,
): Promise<AuthorizationRuleView> {
  const owned = await ownedRule(deps, ctx, id)
  const read =
    body.parameters === undefined ? undefined : readParameters(owned.type, body.parameters)
  return withTx(deps.db, async (trx) => {
    const current = await repo.lockRule(trx, owned.id)
    if (!current) throw new ApiError('authorization_rule_not_found')
    const now = deps.clock.now()
    const patch: repo.RulePatch = { updated_at: now }
    if (body.name !== undefined && body.name !== current.name) patch.name = body.name
    if (body.mode !== undefined && body.mode !== current.mode) patch.mode = body.mode
    if (body.status !== undefined && body.status !== current.status) patch.status = body.status
    if (read && canonicalJson(read.parameters) !== canonicalJson(current.parameters)) {
      patch.parameters = read.parameters
      if (countsDifferently(current.parameters, read.parameters))
        patch.counter_generation = current.counter_generation + 1
    }
    if (Object.keys(patch).length === 1) return presentRule(current)
    const view = presentRule(await repo.updateRule(trx, current.id, patch))
    await emit(trx, ctx, 'authorization_rule.updated', view, now)
    await inSameTx?.(trx, view)
    return view
  })
}

/**
 * Whether a velocity limit's new parameters count other authorizations than the old (another window, aggregate or
 * filters): what its counters hold would then mean something else, so counting starts again under new keys. A new
 * limit alone keeps them (the window's usage stays what it was).
 */
function countsDifferently(before: unknown, after: unknown): boolean {
  const counting = (p: unknown) => {
    const { window, aggregate, filters } = (p ?? {}) as Record<string, unknown>
    return canonicalJson({ window, aggregate, filters })
  }
  return counting(before) !== counting(after)
}

/** DELETE: the rule stops applying at once; `authorization_rule.deleted` carries it as it was last. */
export async function deleteRule(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  inSameTx?: InSameTx<AuthorizationRuleView>,
): Promise<{ id: string; object: 'authorization_rule'; deleted: true }> {
  const owned = await ownedRule(deps, ctx, id)
  await withTx(deps.db, async (trx) => {
    const current = await repo.lockRule(trx, owned.id)
    if (!current) throw new ApiError('authorization_rule_not_found')
    const now = deps.clock.now()
    const view = presentRule(await repo.markDeleted(trx, current.id, now))
    await emit(trx, ctx, 'authorization_rule.deleted', view, now)
    await inSameTx?.(trx, view)
  })
  return { id: owned.id, object: 'authorization_rule', deleted: true }
}
