import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { safeEqual } from '../../lib/crypto.js'
import { newId } from '../../lib/ids.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import { callProcessor, outcomeWithin } from '../../processors/calls.js'
import type { AccountRow } from '../accounts/service.js'
import { requireCard, requireCardProgram, type CardRow } from '../cards/service.js'
import { emit, emitWithin } from '../events/emit.js'
import { incrementHold, lockAccountRow } from '../ledger/service.js'
import { tokenStatusForCard } from '../network-tokens/service.js'
import { decide, windowsNeeded, windowStart, type Decision, type SpendingRules } from './decide.js'
import { presentAuthorization } from './present.js'
import * as repo from './repo.js'
import type { AuthorizationView, SimulateAuthorizationBody } from './schemas.js'
import type { AuthorizationRequestValue, MerchantValue } from './types.js'

/** How long an approved authorization holds funds before the hold is released (status `expired`). */
export const HOLD_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000

export const scopeOf = (row: { organization_id: string; environment: string }) => ({ organizationId: row.organization_id, environment: row.environment })

/** The account row under its lock: every decision and every move of an authorization's money runs under it. */
export async function lockAccount(trx: Db, accountId: string): Promise<AccountRow> {
  const account = await lockAccountRow(trx, accountId)
  if (!account) throw new Error(`account ${accountId} vanished`)
  return account
}

export function available(account: Pick<AccountRow, 'ledger_balance' | 'held_balance'>): number {
  return Number(account.ledger_balance) - Number(account.held_balance)
}

function controlsOf(card: Pick<CardRow, 'spending_controls'>): SpendingRules {
  const c = (card.spending_controls ?? {}) as Partial<SpendingRules>
  return {
    spending_limits: c.spending_limits ?? [], allowed_mccs: c.allowed_mccs ?? [], blocked_mccs: c.blocked_mccs ?? [],
    allowed_countries: c.allowed_countries ?? [], blocked_countries: c.blocked_countries ?? [],
  }
}

/** Approved spend of the card in each window its limits use (nothing is read when it has none). */
async function spentInWindows(trx: Db, card: Pick<CardRow, 'id'>, rules: SpendingRules, now: Date) {
  const windows = windowsNeeded(rules)
  return windows.length === 0 ? {} : repo.spendSince(trx, card.id, windows.map((interval) => ({ interval, from: windowStart(interval, now) })))
}

/**
 * A security code presented with the request, checked against the processor: one call, before and outside
 * any database transaction, only on an issued card. Null: no code presented.
 */
async function checkCvc(deps: AppDeps, card: CardRow, cvc: string | undefined): Promise<{ matches: boolean; operationId: string } | null> {
  if (cvc === undefined || card.processor_reference === null) return null
  const processor = deps.processors.forProgram(await requireCardProgram(deps, card))
  const scope = scopeOf(card)
  const reference = card.processor_reference
  const call = await callProcessor(deps, scope, { processor: processor.name, operation: 'reveal_details', subjectId: card.id },
    () => processor.revealDetails(scope, reference))
  return { matches: safeEqual(call.result.cvc, cvc), operationId: call.operationId }
}

/** Whether a presented expiry is the card's; null when none was presented. */
function expiryMatches(card: Pick<CardRow, 'exp_month' | 'exp_year'>, body: SimulateAuthorizationBody): boolean | null {
  if (body.exp_month === undefined && body.exp_year === undefined) return null
  return body.exp_month === card.exp_month && body.exp_year === card.exp_year
}

/** The status of the token the request came through (null without one); a token not of this card is `token_not_found`. */
async function tokenStatus(deps: AppDeps, trx: Db, ctx: RequestCtx, card: Pick<CardRow, 'id'>, tokenId: string | null): Promise<string | null> {
  if (tokenId === null) return null
  const status = await tokenStatusForCard(deps, trx, ctx, tokenId, card.id)
  if (status === null) throw new ApiError('token_not_found', { param: 'network_token_id', message: `Card ${card.id} has no network token ${tokenId}.` })
  return status
}

function request(type: AuthorizationRequestValue['type'], amount: number, decision: Decision, now: Date): AuthorizationRequestValue {
  return { type, amount, approved: decision.approved, decline_reason: decision.approved ? null : decision.reason, created_at: now.toISOString() }
}

/** Decisions tried without a transaction before one takes the account's row lock (a contended account). */
const OPTIMISTIC_ATTEMPTS = 3

/** A new authorization as the network presented it, checked and normalized once, decided as often as needed. */
interface PresentedAuthorization {
  id: string
  /** When the network presented it: the authorization's created_at, and the time its id is made from. */
  at: Date
  body: SimulateAuthorizationBody
  currency: string
  merchant: MerchantValue
  cvc: { matches: boolean; operationId: string } | null
}

/**
 * Decides a new authorization: the rules of `decide`, then (approved) a hold on the account for the amount.
 * A decline is recorded too, with its reason. Optimistic first: the card and account are read, decided on,
 * and the decision written in one statement committed on its own, which places the hold only while both rows
 * are still the versions read (any change to the account, such as another hold, gives it a new version). A
 * decision that lost that race decides again from a fresh read; after a few it queues on the account's row
 * lock instead, so approvals never overspend and a hot account still makes progress.
 */
export async function authorize(deps: AppDeps, ctx: RequestCtx, body: SimulateAuthorizationBody): Promise<AuthorizationView> {
  const at = deps.clock.now()
  const presented: PresentedAuthorization = {
    id: newId('auth', at), at, body, currency: body.currency.toUpperCase(),
    merchant: { name: body.merchant.name, mcc: body.merchant.mcc ?? null, city: body.merchant.city ?? null, country: body.merchant.country?.toUpperCase() ?? null },
    cvc: body.cvc === undefined ? null : await checkCvc(deps, await requireCard(deps, ctx, body.card_id, 'card_id'), body.cvc),
  }
  for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
    const view = await decideAndRecord(deps, ctx, deps.db, presented, false)
    if (view) return view
  }
  return withTx(deps.db, async (trx) => {
    const view = await decideAndRecord(deps, ctx, trx, presented, true)
    if (!view) throw new Error(`authorization ${presented.id} not written under the account's lock`)
    return view
  })
}

/** One decision from one read; null when the approval's write found the card or account changed since. */
async function decideAndRecord(deps: AppDeps, ctx: RequestCtx, db: Db, p: PresentedAuthorization, lock: boolean): Promise<AuthorizationView | null> {
  const { body, currency, id, at: now } = p
  const facts = await repo.readCardAndAccount(db, body.card_id, lock)
  const card = requireOwned(facts?.card, ctx, 'card_not_found', 'card_id')
  const { account, versions } = facts!
  const rules = controlsOf(card)
  const decision = decide({
    amount: body.amount, currency, merchant: p.merchant,
    card: { status: card.status, expMonth: card.exp_month, expYear: card.exp_year, controls: rules },
    account: { status: account.status, currency: account.currency, available: available(account) },
    tokenStatus: await tokenStatus(deps, db, ctx, card, body.network_token_id ?? null),
    expiryMatches: expiryMatches(card, body), cvcMatches: p.cvc?.matches ?? null,
    spent: await spentInWindows(db, card, rules, now), alreadyAuthorized: 0, now,
  })
  const row: repo.AuthorizationRow = {
    id, organization_id: card.organization_id, environment: card.environment, program_id: card.program_id,
    card_id: card.id, account_id: account.id, network_token_id: body.network_token_id ?? null,
    status: decision.approved ? 'pending' : 'declined', approved: decision.approved,
    amount: body.amount, held_amount: decision.approved ? body.amount : 0, captured_amount: 0, reversed_amount: 0,
    currency, merchant: p.merchant, decline_reason: decision.approved ? null : decision.reason, hold_id: decision.approved ? newId('hold') : null,
    request_history: [request('authorization', body.amount, decision, now)],
    expires_at: decision.approved ? new Date(now.getTime() + HOLD_LIFETIME_MS) : null, created_at: now, updated_at: now,
  }
  const view = presentAuthorization(row)
  const written = await repo.recordDecision(db, {
    row, hold: decision.approved ? { entryId: newId('le'), versions } : null,
    outcome: p.cvc ? outcomeWithin(p.cvc.operationId, 'succeeded', now, 'auth') : null,
    event: emitWithin(scopeOf(row), 'authorization.created', 'auth', sql`${JSON.stringify(view)}::json`, now),
  })
  if (!written.written) return null
  if (written.notified) signalJobsQueued()
  return view
}

/**
 * An incremental authorization: the same rules decide the increase (per-authorization limits count the
 * new total). Approved, the hold and `amount` grow; declined, nothing moves. Either way the request is
 * appended to `request_history` and authorization.updated is emitted.
 */
export async function incrementAuthorization(deps: AppDeps, ctx: RequestCtx, authorizationId: string, amount: number, card: CardRow): Promise<AuthorizationView> {
  const rules = controlsOf(card)
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const account = await lockAccount(trx, card.account_id)
    const auth = (await repo.findAuthorization(trx, authorizationId))!
    requirePending(auth, 'incremented')
    let decision = decide({
      amount, currency: auth.currency, merchant: auth.merchant,
      card: { status: card.status, expMonth: card.exp_month, expYear: card.exp_year, controls: rules },
      account: { status: account.status, currency: account.currency, available: available(account) },
      tokenStatus: await tokenStatus(deps, trx, ctx, card, auth.network_token_id), expiryMatches: null, cvcMatches: null,
      spent: await spentInWindows(trx, card, rules, now), alreadyAuthorized: Number(auth.amount), now,
    })
    if (decision.approved) {
      const raised = await incrementHold(trx, auth.hold_id!, amount, now)
      if (!raised.approved) decision = { approved: false, reason: raised.reason }
    }
    const row = await repo.updateAuthorization(trx, auth.id, decision.approved
      ? { amount: Number(auth.amount) + amount, held_amount: Number(auth.held_amount) + amount, updated_at: now }
      : { updated_at: now }, request('increment', amount, decision, now))
    const view = presentAuthorization(row)
    await emit(trx, scopeOf(row), 'authorization.updated', view, now)
    return view
  })
}

/** Only a pending authorization (one that still holds funds) can be incremented or reversed. */
export function requirePending(auth: repo.AuthorizationRow, action: string): void {
  if (auth.status === 'pending') return
  throw new ApiError('authorization_invalid_state', {
    message: `Authorization ${auth.id} is ${auth.status}; only a pending authorization can be ${action}.`,
  })
}
