import { iso } from '../../http/ownership.js'
import type { CardRow } from './repo.js'
import type { CardView } from './schemas.js'
import { emptySpendingControls } from './spending-controls.js'
import { presentTravelMode } from './travel.js'

/**
 * The masked REST shape of a card: never the full number or the security code. `now` decides whether its travel
 * mode is active.
 */
export function presentCard(row: CardRow, now: Date = new Date()): CardView {
  return {
    id: row.id,
    object: 'card',
    cardholder_id: row.cardholder_id,
    account_id: row.account_id,
    program_id: row.program_id,
    form_factor: row.form_factor,
    card_type: row.card_type,
    brand: row.brand,
    status: row.status as CardView['status'],
    last4: row.last4,
    exp_month: row.exp_month,
    exp_year: row.exp_year,
    embossed_name: row.embossed_name,
    delivery_address: row.delivery_address,
    shipping: row.shipping ?? null,
    spending_controls: { ...emptySpendingControls(), ...row.spending_controls },
    travel_mode: presentTravelMode(row, now),
    pin_set: row.pin_set,
    replacement_for: row.replacement_for,
    replacement_reason: row.replacement_reason,
    replaced_by: row.replaced_by,
    metadata: row.metadata ?? {},
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
