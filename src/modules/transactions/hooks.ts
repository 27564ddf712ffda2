import type { Db } from '../../db/types.js'
import { defineHook } from '../../lib/slots.js'

/** How much of a capture disputes hold: won back or still claimed (minor units). */
export type DisputedTotal = (trx: Db, transactionId: string) => Promise<number>

/** Asked before a refund: what disputes claim of a capture; answered by disputes. Without disputes, nothing. */
export const DISPUTED_TOTAL = defineHook<DisputedTotal>('disputedTotal', async () => 0)
