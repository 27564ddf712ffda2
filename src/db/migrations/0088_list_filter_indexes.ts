import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Every list filter gets an index that returns its rows in list order (docs/platform.md, "List filters and their
 * indexes"). Lists page newest first on `(organization_id, environment, id DESC)`; a filter that was only a WHERE
 * clause made PostgreSQL walk that index past every row the filter rejects, so a rare value (`status=closed` among
 * a million cards) cost a walk of the organization's table. Each index below starts with the scope and the
 * filter's column(s) and ends with `id DESC`: a page is one range read of at most `limit + 1` entries.
 *
 * A pair of closed-set filters (transactions' type and status, network tokens' wallet and status, reports' type
 * and status) has one index on both columns: the pair is one range, and one column alone is read as a merge of
 * one range per value of the other (`mergedPage`), instead of three indexes on the same table.
 * `docs/decisions/list-filter-indexes.md` says why, and what is refused instead of indexed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    // GET /v1/cards?status= (and the console's card list by status).
    `CREATE INDEX cards_status ON cards (organization_id, environment, status, id DESC)`,

    // GET /v1/cardholders?kyc_status=: the effective status depends on the time (an attestation past its expiry
    // reads `expired`), so the index holds only rows whose expiry has not been announced (kyc_expiry_notified is
    // set by the expiry job, or at once for an attestation recorded already expired) ...
    `CREATE INDEX cardholders_kyc_status ON cardholders (organization_id, environment, kyc_status, id DESC) WHERE NOT kyc_expiry_notified`,
    // ... ?kyc_status=expired reads the announced ones in id order ...
    `CREATE INDEX cardholders_kyc_expired ON cardholders (organization_id, environment, id DESC) WHERE kyc_expiry_notified`,
    // ... and those past their expiry whose announcement is still due (normally none: the job runs at expires_at).
    `CREATE INDEX cardholders_kyc_expiry_due ON cardholders (organization_id, environment, kyc_expires_at) WHERE NOT kyc_expiry_notified AND kyc_expires_at IS NOT NULL`,
    // Attestations recorded already expired queued no expiry job: their `cardholder.kyc_updated` said `expired`.
    `UPDATE cardholders AS c SET kyc_expiry_notified = true FROM kyc_attestations AS a
      WHERE a.id = c.kyc_attestation_id AND NOT c.kyc_expiry_notified AND c.kyc_expires_at <= a.created_at`,

    // GET /v1/authorizations?status= (and the console's authorization list by status).
    `CREATE INDEX authorizations_status ON authorizations (organization_id, environment, status, id DESC)`,
    // The console's account page: the account's pending authorizations (account_id + status=pending), which
    // authorizations_account would find only by walking the account's whole history.
    `CREATE INDEX authorizations_account_pending ON authorizations (account_id, id DESC) WHERE status = 'pending'`,

    // GET /v1/transactions?type=&status= (either or both; the console's transaction list).
    `CREATE INDEX transactions_type_status ON transactions (organization_id, environment, type, status, id DESC)`,
    // GET /v1/transactions?authorization_id= (and the console's authorization page) in list order; the lookups by
    // authorization id that read the old (authorization_id) index read this one.
    `CREATE INDEX transactions_authorization_log ON transactions (authorization_id, id DESC) WHERE authorization_id IS NOT NULL`,
    `DROP INDEX transactions_authorization`,
    `ALTER INDEX transactions_authorization_log RENAME TO transactions_authorization`,

    // GET /v1/authentications?status=.
    `CREATE INDEX authentications_status ON authentications (organization_id, environment, status, id DESC)`,

    // GET /v1/disputes?status= and ?card_id= (a card's disputes had no index: the scope was walked).
    `CREATE INDEX disputes_status ON disputes (organization_id, environment, status, id DESC)`,
    `CREATE INDEX disputes_card ON disputes (card_id, id DESC)`,

    // GET /v1/network_tokens?wallet=&status= (either or both; the console's token list).
    `CREATE INDEX network_tokens_wallet_status ON network_tokens (organization_id, environment, wallet, status, id DESC)`,

    // GET /v1/reports?type=&status= (either or both; the console's report list).
    `CREATE INDEX reports_type_status ON reports (organization_id, environment, type, status, id DESC)`,

    // GET /v1/esim/orders?status= (unsettled also takes orders still in flight: two ranges, merged).
    `CREATE INDEX esim_orders_status ON esim_orders (organization_id, environment, status, id DESC)`,

    // GET /v1/oauth_clients (the console's client list): the scope had no index at all; and ?status=.
    `CREATE INDEX oauth_clients_scope ON oauth_clients (organization_id, environment, id DESC)`,
    `CREATE INDEX oauth_clients_status ON oauth_clients (organization_id, environment, status, id DESC)`,

    // GET /v1/webhook_endpoints/{id}/deliveries?status= (failed also takes canceled: two ranges, merged) ...
    `CREATE INDEX webhook_deliveries_endpoint_status ON webhook_deliveries (endpoint_id, status, id DESC)`,
    // ... and ?event_type= (a prefix such as card.* is one range per type of the prefix, merged).
    `CREATE INDEX webhook_deliveries_endpoint_type ON webhook_deliveries (endpoint_id, event_type, id DESC)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
