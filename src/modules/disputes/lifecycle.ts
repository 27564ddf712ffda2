/** Every status a dispute can be in: submitted → under_review → won | lost, or withdrawn while open. */
export type DisputeStatus = 'submitted' | 'under_review' | 'won' | 'lost' | 'withdrawn'
export const DISPUTE_STATUSES: readonly DisputeStatus[] = [
  'submitted',
  'under_review',
  'won',
  'lost',
  'withdrawn',
]

/** Open disputes: the only ones that can still be withdrawn or resolved; one per transaction at a time. */
export const OPEN_STATUSES: readonly DisputeStatus[] = ['submitted', 'under_review']

export function isOpen(status: string): boolean {
  return (OPEN_STATUSES as readonly string[]).includes(status)
}

/**
 * What is left to dispute of a capture: its amount minus what was refunded and what earlier disputes
 * won back. Lost and withdrawn disputes returned nothing, so they leave it unchanged.
 */
export function disputableAmount(
  transaction: { amount: number; refunded_amount: number },
  wonTotal: number,
): number {
  return Math.max(0, Number(transaction.amount) - Number(transaction.refunded_amount) - wonTotal)
}
