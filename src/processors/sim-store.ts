import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import { json } from '../db/types.js'
import type { ProcessorScope } from './port.js'
import type { SimProcessorObjectsTable } from './types.js'
import './types.js'

export type SimObject = SimProcessorObjectsTable

/** A card's number and code as stored: both encrypted, plus the keyed hash that keeps numbers unique. */
export interface SealedCardData {
  panEncrypted: string
  cvcEncrypted: string
  panHmac: string
}

/** The simulated processors' own records (what a real processor keeps on its side), kept apart from ours. */
export class SimStore {
  constructor(
    private readonly db: Db,
    readonly processor: string,
  ) {}

  /**
   * Creates the object once per (kind, key): a retried call gets the first object back. Cards carry their
   * sealed number and code from the start; a number another card holds fails on `sim_processor_objects_pan_hmac`.
   */
  async put(
    scope: ProcessorScope,
    kind: string,
    key: string,
    reference: string,
    state: string,
    data: Record<string, unknown>,
    now: Date,
    card?: SealedCardData,
  ): Promise<SimObject> {
    const { rows } = await sql<SimObject>`INSERT INTO sim_processor_objects
        (processor, kind, key, reference, organization_id, environment, state, data, pan_encrypted, cvc_encrypted, pan_hmac, created_at, updated_at)
      VALUES (${this.processor}, ${kind}, ${key}, ${reference}, ${scope.organizationId}, ${scope.environment}, ${state}, ${json(data)},
        ${card?.panEncrypted ?? null}, ${card?.cvcEncrypted ?? null}, ${card?.panHmac ?? null}, ${now}, ${now})
      ON CONFLICT (processor, kind, key) DO NOTHING
      RETURNING *`.execute(this.db)
    return rows[0] ?? (await this.byKey(scope, kind, key))!
  }

  async byKey(scope: ProcessorScope, kind: string, key: string): Promise<SimObject | undefined> {
    return this.db
      .selectFrom('sim_processor_objects')
      .selectAll()
      .where('processor', '=', this.processor)
      .where('kind', '=', kind)
      .where('key', '=', key)
      .where('organization_id', '=', scope.organizationId)
      .where('environment', '=', scope.environment)
      .executeTakeFirst()
  }

  async byReference(
    scope: ProcessorScope,
    kind: string,
    reference: string,
  ): Promise<SimObject | undefined> {
    return this.db
      .selectFrom('sim_processor_objects')
      .selectAll()
      .where('reference', '=', reference)
      .where('processor', '=', this.processor)
      .where('kind', '=', kind)
      .where('organization_id', '=', scope.organizationId)
      .where('environment', '=', scope.environment)
      .executeTakeFirst()
  }

  /**
   * Gives a card created without number data (before the simulator stored any) its sealed number and code,
   * once even when two calls race: undefined when another call got there first.
   */
  async assignCardData(
    reference: string,
    card: SealedCardData,
    now: Date,
  ): Promise<SimObject | undefined> {
    const { rows } = await sql<SimObject>`UPDATE sim_processor_objects
      SET pan_encrypted = ${card.panEncrypted}, cvc_encrypted = ${card.cvcEncrypted}, pan_hmac = ${card.panHmac}, updated_at = ${now}
      WHERE reference = ${reference} AND processor = ${this.processor} AND kind = 'card' AND pan_hmac IS NULL
      RETURNING *`.execute(this.db)
    return rows[0]
  }

  /** Moves an object to a new state and merges `data`; returns the updated object. */
  async update(
    reference: string,
    state: string,
    data: Record<string, unknown>,
    now: Date,
  ): Promise<SimObject> {
    const { rows } = await sql<SimObject>`UPDATE sim_processor_objects
      SET state = ${state}, data = data || ${json(data)}::jsonb, updated_at = ${now}
      WHERE reference = ${reference} RETURNING *`.execute(this.db)
    return rows[0]
  }
}
