import type { ExpressionBuilder, Selectable } from 'kysely'
import { sql } from 'kysely'
import type { Database, Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { CardTarget } from './evaluate.js'
import type { RuleParameters, RuleScope } from './rule.js'
import type { AuthorizationRulesTable } from './types.js'

export type RuleRow = Selectable<AuthorizationRulesTable>

/** A live rule (not deleted) by id. */
export async function findRule(db: Db, id: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('authorization_rules')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
}

/** The same, holding the row lock until the transaction ends (a change and its event are made under it). */
export async function lockRule(trx: Db, id: string): Promise<RuleRow | undefined> {
  return trx
    .selectFrom('authorization_rules')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst()
}

export interface NewRule {
  id: string
  organization_id: string
  environment: string
  name: string
  scope: RuleScope
  rule: RuleParameters
  mode: 'active' | 'shadow'
  now: Date
}

/** Inserts the rule and its targets (`authorization_rule_targets`: one row per id it names), in the caller's transaction. */
export async function insertRule(db: Db, r: NewRule): Promise<RuleRow> {
  const targets = [
    ...[...new Set(r.scope.ids)].map((id) => ({ target_id: id, rule_id: r.id, excluded: false })),
    ...[...new Set(r.scope.exclude_ids)].map((id) => ({
      target_id: id,
      rule_id: r.id,
      excluded: true,
    })),
  ]
  // An exclusion is always under the scope, of another kind than its ids (scope.ts): no id is both.
  await db.insertInto('authorization_rule_targets').values(targets).execute()
  return db
    .insertInto('authorization_rules')
    .values({
      id: r.id,
      organization_id: r.organization_id,
      environment: r.environment,
      name: r.name,
      scope_level: r.scope.level,
      scope_ids: json(r.scope.ids),
      exclude_ids: json(r.scope.exclude_ids),
      type: r.rule.type,
      parameters: json(r.rule.parameters),
      mode: r.mode,
      status: 'enabled',
      created_at: r.now,
      updated_at: r.now,
      deleted_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface RulePatch {
  name?: string
  parameters?: RuleParameters['parameters']
  mode?: 'active' | 'shadow'
  status?: 'enabled' | 'disabled'
  counter_generation?: number
  updated_at: Date
}

export async function updateRule(trx: Db, id: string, patch: RulePatch): Promise<RuleRow> {
  const { parameters, ...rest } = patch
  return trx
    .updateTable('authorization_rules')
    .set({ ...rest, ...(parameters !== undefined ? { parameters: json(parameters) } : {}) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Marks the rule deleted: the row stays for the decisions that name it, every read of the API skips it; its targets go
 * (no decision reads it any more).
 */
export async function markDeleted(trx: Db, id: string, now: Date): Promise<RuleRow> {
  await trx.deleteFrom('authorization_rule_targets').where('rule_id', '=', id).execute()
  return trx
    .updateTable('authorization_rules')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** `scope_ids` names `id` (the GIN index `authorization_rules_targets` answers it). */
const names = (column: 'scope_ids' | 'exclude_ids', id: string) =>
  sql<boolean>`${sql.ref(column)} @> ${json([id])}::jsonb`

/**
 * The condition that keeps the rules applying to `card` (see `listRules`): its program, account, cardholder or itself
 * named at that level, and none of the card, its account or its cardholder excluded.
 */
function appliesTo(card: CardTarget) {
  const targets = [
    ['program', card.program_id],
    ['account', card.account_id],
    ['cardholder', card.cardholder_id],
    ['card', card.id],
  ] as const
  return (eb: ExpressionBuilder<Database, 'authorization_rules'>) =>
    eb.and([
      eb.or(
        targets.map(([level, id]) =>
          eb.and([eb('scope_level', '=', sql.lit(level)), names('scope_ids', id)]),
        ),
      ),
      eb.not(
        eb.or([card.id, card.account_id, card.cardholder_id].map((id) => names('exclude_ids', id))),
      ),
    ])
}

/**
 * A page of a scope's live rules, newest first; with `card`, only those that apply to it: the rules naming its
 * program, account, cardholder or itself at that level, none of whose exclusions names the card, its account or its
 * cardholder. A card's rules are few, so they are read through the GIN index and sorted.
 */
export async function listRules(
  db: Db,
  organizationId: string,
  environment: string,
  bounds: PageBounds,
  card?: CardTarget,
): Promise<RuleRow[]> {
  let q = db
    .selectFrom('authorization_rules')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .where('deleted_at', 'is', null)
  if (card) q = q.where(appliesTo(card))
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** The enabled velocity limits that apply to `card`, in id order (the order the decision evaluates them in). */
export async function velocityRulesOf(
  db: Db,
  organizationId: string,
  environment: string,
  card: CardTarget,
): Promise<RuleRow[]> {
  const q = db
    .selectFrom('authorization_rules')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .where('deleted_at', 'is', null)
    .where('status', '=', 'enabled')
    .where('type', '=', 'velocity_limit')
  return q.where(appliesTo(card)).orderBy('id').execute()
}
