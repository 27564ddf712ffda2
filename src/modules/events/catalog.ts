/**
 * Every event type the service emits (decisions.md "Webhooks and events", plus the endpoint's own
 * `webhook_endpoint.disabled`). Webhook endpoints subscribe to these names or to `*`.
 */
export const EVENT_TYPES = [
  'cardholder.created', 'cardholder.updated', 'cardholder.kyc_updated',
  'account.created', 'account.provisioned', 'account.credited', 'account.debited', 'account.blocked', 'account.unblocked',
  'card.created', 'card.issued', 'card.activated', 'card.frozen', 'card.unfrozen', 'card.closed', 'card.replaced',
  'card.expired', 'card.pin_set', 'card.shipped',
  'authorization.created', 'authorization.updated',
  'transaction.created', 'transaction.updated',
  'dispute.created', 'dispute.updated',
  'network_token.created', 'network_token.updated',
  'authentication.created', 'authentication.updated',
  'esim_order.created', 'esim_order.settled', 'esim_order.failed',
  'esim.topped_up', 'esim.low_data', 'esim.depleted',
  'webhook_endpoint.disabled',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

const KNOWN = new Set<string>(EVENT_TYPES)

/** True for a type in the catalogue; subscriptions to anything else are refused. */
export function isEventType(value: string): value is EventType {
  return KNOWN.has(value)
}

/** Whether an endpoint subscribed to `enabledEvents` receives events of `type` (replays; new events apply the same rule in SQL, `deliveriesWithin`). */
export function subscribes(enabledEvents: readonly string[], type: string): boolean {
  return enabledEvents.includes('*') || enabledEvents.includes(type)
}
