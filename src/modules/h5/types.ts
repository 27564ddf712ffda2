import type { Json, Timestamp } from '../../db/types.js'

/** The parts of the traveller page a link shows, in its order. */
export type H5Section = 'esims' | 'cards' | 'balance'

/** A hosted-page link: only the SHA-256 of its token is kept, so a database read never yields a usable link. */
export interface EsimH5LinksTable {
  id: string
  organization_id: string
  environment: string
  cardholder_id: string
  token_hash: string
  allow_purchases: boolean
  sections: Json<H5Section[]>
  /** The cardholder's account the page's purchases debit; null: billed to the organization. */
  pay_from_account_id: string | null
  /** Whether the cards section may show card details (the link's creator held `cards:secrets`). */
  card_details: boolean
  expires_at: Timestamp
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    esim_h5_links: EsimH5LinksTable
  }
}
