import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import { ApiError, type FieldError } from '../../http/errors.js'
import { isValidIccid } from './iccid.js'
import './types.js'

/** The stock of blank profiles: loaded by the operator, reserved by orders, returned when nothing was bought. */

export interface BlankProfile {
  iccid: string
  smdp_address: string
  matching_id: string
}

const HOST =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i
const MATCHING_ID = /^[A-Za-z0-9-]{1,64}$/

export interface InventoryLoad {
  object: 'esim_inventory_load'
  loaded: number
  skipped: number
}

/**
 * Operator: adds profiles to stock, all or none (one transaction). Already known ICCIDs are skipped, so a file can
 * be loaded twice. `inSameTx`: the caller's work in the load's transaction (the console's audit row).
 */
export async function loadProfiles(
  deps: AppDeps,
  profiles: BlankProfile[],
  inSameTx?: InSameTx<InventoryLoad>,
): Promise<InventoryLoad> {
  const errors: FieldError[] = []
  profiles.forEach((p, i) => {
    if (!isValidIccid(p.iccid))
      errors.push({
        code: 'invalid_parameter',
        param: `profiles[${i}].iccid`,
        message: 'An ICCID has 19 digits, starts with 89 and ends with a Luhn check digit.',
      })
    if (!HOST.test(p.smdp_address))
      errors.push({
        code: 'invalid_parameter',
        param: `profiles[${i}].smdp_address`,
        message: 'The SM-DP+ address is a host name.',
      })
    if (!MATCHING_ID.test(p.matching_id))
      errors.push({
        code: 'invalid_parameter',
        param: `profiles[${i}].matching_id`,
        message: 'A matching id is 1 to 64 letters, digits or dashes.',
      })
  })
  if (errors.length === 1)
    throw new ApiError('invalid_parameter', { param: errors[0].param, message: errors[0].message })
  if (errors.length > 1)
    throw new ApiError('invalid_parameter', {
      message: 'Several profiles are invalid.',
      errors: errors.slice(0, 100),
    })
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    let loaded = 0
    for (let i = 0; i < profiles.length; i += 500) {
      const chunk = profiles.slice(i, i + 500)
      const result = await sql<{ iccid: string }>`
        INSERT INTO esim_profiles (iccid, smdp_address, matching_id, state, order_id, loaded_at, updated_at)
        VALUES ${sql.join(chunk.map((p) => sql`(${p.iccid}, ${p.smdp_address.toLowerCase()}, ${p.matching_id.toUpperCase()}, 'available', NULL, ${now}, ${now})`))}
        ON CONFLICT DO NOTHING RETURNING iccid`.execute(trx)
      loaded += result.rows.length
    }
    const load: InventoryLoad = {
      object: 'esim_inventory_load',
      loaded,
      skipped: profiles.length - loaded,
    }
    if (loaded > 0) await inSameTx?.(trx, load)
    return load
  })
}

export async function inventoryCounts(deps: AppDeps): Promise<{
  object: 'esim_inventory'
  available: number
  allocated: number
  provisioned: number
}> {
  const rows = await deps.db
    .selectFrom('esim_profiles')
    .select(['state', sql<number>`count(*)::int`.as('n')])
    .groupBy('state')
    .execute()
  const count = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0)
  return {
    object: 'esim_inventory',
    available: count('available'),
    allocated: count('allocated'),
    provisioned: count('provisioned'),
  }
}

/** Puts a reserved profile back in stock (nothing was bought with it). */
export async function returnProfile(trx: Db, iccid: string, now: Date): Promise<void> {
  await sql`UPDATE esim_profiles SET state = 'available', order_id = NULL, updated_at = ${now} WHERE iccid = ${iccid} AND state = 'allocated'`.execute(
    trx,
  )
}
