import { iso } from '../../http/ownership.js'
import type { RuleRow } from './repo.js'
import type { AuthorizationRuleView } from './schemas.js'

/** The REST shape of a rule (also the object of its events). */
export function presentRule(row: RuleRow): AuthorizationRuleView {
  return {
    id: row.id,
    object: 'authorization_rule',
    name: row.name,
    scope: { level: row.scope_level, ids: row.scope_ids, exclude_ids: row.exclude_ids },
    type: row.type,
    parameters: row.parameters as AuthorizationRuleView['parameters'],
    mode: row.mode,
    status: row.status,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
