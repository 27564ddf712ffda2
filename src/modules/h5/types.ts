import type { Timestamp } from '../../db/types.js'

/** A hosted-page link: only the SHA-256 of its token is kept, so a database read never yields a usable link. */
export interface EsimH5LinksTable {
  id: string
  organization_id: string
  environment: string
  cardholder_id: string
  token_hash: string
  allow_purchases: boolean
  expires_at: Timestamp
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    esim_h5_links: EsimH5LinksTable
  }
}
