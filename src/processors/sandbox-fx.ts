import { type RawBuilder, sql } from 'kysely'
import type { Db } from '../db/types.js'
import { FxCurrencyError, FxError, normalizeRate } from '../lib/fx.js'
import { knownCurrency } from '../lib/currencies.js'
import type { FxQuote, ProcessorScope, SandboxPins } from './port.js'
import { sandboxTableRate } from './sandbox-fx-table.js'
import './types.js'

/**
 * The sandbox's rates: a rate the organization pinned for its environment (`sim_fx_rates`), else the built-in table
 * (`sandbox-fx-table.ts`). What the simulated processors convert at and what `GET /v1/fx_rates` answers.
 */

/** A sandbox rate with where it comes from: `pinned` when the organization set it, and then `rateAt` is when. */
export interface SandboxRate extends FxQuote {
  base: string
  quote: string
  source: 'sandbox'
  pinned: boolean
}

/** Upper-cases and checks a pair: both known (`FxCurrencyError` naming `base` or `quote`) and different. */
export function currencyPair(base: string, quote: string): { base: string; quote: string } {
  const pair = { base: base.toUpperCase(), quote: quote.toUpperCase() }
  if (!knownCurrency(pair.base)) throw new FxCurrencyError(base, 'base')
  if (!knownCurrency(pair.quote)) throw new FxCurrencyError(quote, 'quote')
  if (pair.base === pair.quote)
    throw new FxError(
      'quote',
      'quote must be another currency than base: a currency converts to itself at 1.',
    )
  return pair
}

/**
 * The tenant's pinned rates into `quote`, as one JSON value by base (null when it pinned none): a read the
 * authorization decision's statement embeds, so that a spend abroad is rated without a statement of its own.
 */
export function sandboxPinsSql(
  organizationId: RawBuilder<unknown>,
  environment: RawBuilder<unknown>,
  quote: RawBuilder<unknown>,
): RawBuilder<SandboxPins | null> {
  return sql`(SELECT jsonb_object_agg(s.base, jsonb_build_array(s.rate, s.updated_at))
    FROM sim_fx_rates s
    WHERE s.organization_id = ${organizationId} AND s.environment = ${environment} AND s.quote = ${quote})`
}

/** The tenant's pin of a pair, read on its own (a caller whose read did not carry them). */
function readPin(db: Db, scope: ProcessorScope, pair: { base: string; quote: string }) {
  return db
    .selectFrom('sim_fx_rates')
    .select(['rate', 'updated_at'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('base', '=', pair.base)
    .where('quote', '=', pair.quote)
    .executeTakeFirst()
}

/**
 * The rate `base → quote` for this tenant at `at`: its pinned one, else the table's. `pins`, when the caller's
 * read carried them (`sandboxPinsSql` for this tenant and `quote`), are used instead of reading them again.
 */
export async function sandboxFxRate(
  db: Db,
  scope: ProcessorScope,
  base: string,
  quote: string,
  at: Date,
  pins?: SandboxPins | null,
): Promise<SandboxRate> {
  const pair = currencyPair(base, quote)
  const carried = pins?.[pair.base]
  const pinned =
    pins === undefined
      ? await readPin(db, scope, pair)
      : carried && { rate: carried[0], updated_at: carried[1] }
  if (pinned)
    return {
      ...pair,
      rate: pinned.rate,
      source: 'sandbox',
      pinned: true,
      rateAt: new Date(pinned.updated_at),
    }
  return {
    ...pair,
    rate: sandboxTableRate(pair.base, pair.quote),
    source: 'sandbox',
    pinned: false,
    rateAt: at,
  }
}

/**
 * Pins `base → quote` at `rate` for this tenant (the other direction keeps its own rate); pinning again replaces it.
 * A bad pair or rate throws an `FxError` naming `base`, `quote` or `rate`.
 */
export async function pinSandboxFxRate(
  db: Db,
  scope: ProcessorScope,
  base: string,
  quote: string,
  rate: string,
  now: Date,
): Promise<SandboxRate> {
  const pair = currencyPair(base, quote)
  const canonical = normalizeRate(rate)
  await db
    .insertInto('sim_fx_rates')
    .values({
      organization_id: scope.organizationId,
      environment: scope.environment,
      ...pair,
      rate: canonical,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'environment', 'base', 'quote'])
        .doUpdateSet({ rate: canonical, updated_at: now }),
    )
    .execute()
  return { ...pair, rate: canonical, source: 'sandbox', pinned: true, rateAt: now }
}
