import { iso } from '../../http/ownership.js'
import type { DeclineReason } from './decide.js'
import { SVC_DECISION } from './integrator.js'
import type { AuthorizationRow } from './repo.js'
import type { AuthorizationView } from './schemas.js'

/** The REST shape of an authorization (also the `data.object` of its events). */
export function presentAuthorization(row: AuthorizationRow): AuthorizationView {
  return {
    id: row.id,
    object: 'authorization',
    status: row.status as AuthorizationView['status'],
    approved: row.approved,
    amount: Number(row.amount),
    held_amount: Number(row.held_amount),
    captured_amount: Number(row.captured_amount),
    reversed_amount: Number(row.reversed_amount),
    currency: row.currency,
    merchant_amount: Number(row.merchant_amount),
    merchant_currency: row.merchant_currency,
    fx: row.fx === null ? null : { ...row.fx, fee_amount: Number(row.fx.fee_amount) },
    merchant: {
      name: row.merchant.name,
      mcc: row.merchant.mcc ?? null,
      city: row.merchant.city ?? null,
      country: row.merchant.country ?? null,
    },
    card_id: row.card_id,
    account_id: row.account_id,
    program_id: row.program_id,
    network_token_id: row.network_token_id,
    decline_reason: (row.decline_reason as DeclineReason | null) ?? null,
    rule_id: row.rule_id ?? null,
    rule_results: row.rule_results ?? [],
    request_history: row.request_history.map((r) => ({
      ...r,
      decline_reason: r.decline_reason ?? null,
      decision: r.decision ?? SVC_DECISION,
      rule_results: r.rule_results ?? [],
      rule_id: r.rule_id ?? null,
    })),
    decision: row.decision ?? SVC_DECISION,
    expires_at: iso(row.expires_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
