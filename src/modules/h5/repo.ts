import { sql, type Insertable, type Selectable } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import type { Db } from '../../db/types.js'
import type { EsimH5LinksTable } from './types.js'
import './types.js'

export type LinkRow = Selectable<EsimH5LinksTable>

export async function insertLink(db: Db, row: Insertable<EsimH5LinksTable>): Promise<void> {
  await db.insertInto('esim_h5_links').values(row).execute()
}

/** Links are found by the digest of their token only; the token itself is never stored. */
export async function findLinkByTokenHash(db: Db, tokenHash: string): Promise<LinkRow | undefined> {
  return db
    .selectFrom('esim_h5_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/** Deletes links that expired before `before` (`esim_h5_links_expiry`), in short batches; answers how many. */
export async function purgeLinksExpiredBefore(
  db: Db,
  before: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'esim_h5_links',
    key: 'id',
    orderBy: 'expires_at',
    where: sql`expires_at < ${before}`,
  })
}
