import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The simulated processors keep each card's number and security code the way a real processor would:
 * encrypted, with a keyed hash of the number under a unique index so no two cards share a PAN.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE sim_processor_objects ADD COLUMN pan_encrypted text`,
    `ALTER TABLE sim_processor_objects ADD COLUMN cvc_encrypted text`,
    `ALTER TABLE sim_processor_objects ADD COLUMN pan_hmac text`,
    `ALTER TABLE sim_processor_objects ADD CONSTRAINT sim_processor_objects_card_data_complete
      CHECK ((pan_hmac IS NULL) = (pan_encrypted IS NULL) AND (pan_hmac IS NULL) = (cvc_encrypted IS NULL))`,
    `CREATE UNIQUE INDEX sim_processor_objects_pan_hmac ON sim_processor_objects (pan_hmac) WHERE pan_hmac IS NOT NULL`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
