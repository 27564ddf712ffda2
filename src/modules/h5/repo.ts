import type { Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import type { EsimH5LinksTable } from './types.js'
import './types.js'

export type LinkRow = Selectable<EsimH5LinksTable>

export async function insertLink(db: Db, row: LinkRow): Promise<void> {
  await db.insertInto('esim_h5_links').values(row).execute()
}

/** Links are found by the digest of their token only; the token itself is never stored. */
export async function findLinkByTokenHash(db: Db, tokenHash: string): Promise<LinkRow | undefined> {
  return db.selectFrom('esim_h5_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}
