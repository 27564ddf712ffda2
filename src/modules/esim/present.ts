import type { Static } from 'typebox'
import type { FxDetailsValue } from '../../http/fx-details.js'
import { iso } from '../../http/ownership.js'
import type { OrderRow } from './orders-repo.js'
import type { EsimOrder } from './schemas.js'

export type OrderView = Static<typeof EsimOrder>

/** The REST shape of an order: `esim_id` is absent until the order completed; an in-flight order reads as unsettled. */
export function presentOrder(row: OrderRow): OrderView {
  return {
    id: row.id,
    object: 'esim_order',
    type: row.type as OrderView['type'],
    trigger: row.trigger as OrderView['trigger'],
    status: (row.status === 'pending' ? 'unsettled' : row.status) as OrderView['status'],
    package_id: row.package_id,
    top_up_id: row.top_up_id,
    ...(row.esim_id !== null ? { esim_id: row.esim_id } : {}),
    cardholder_id: row.cardholder_id,
    account_id: row.account_id,
    price: Number(row.price),
    currency: row.currency,
    charged_amount: row.charged_amount === null ? null : Number(row.charged_amount),
    charged_currency: row.charged_currency,
    fx: (row.fx as FxDetailsValue | null) ?? null,
    reference: row.reference,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    failure_reason: row.failure_reason,
    refunded_at: iso(row.refunded_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    settled_at: iso(row.settled_at),
  }
}
