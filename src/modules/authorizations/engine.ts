import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { convertAtQuote } from '../../http/fx-details.js'
import { fxRefusal } from '../../http/fx-errors.js'
import { answerToStore, type AnswerToStore } from '../../http/idempotent-answer.js'
import { requireOwned } from '../../http/ownership.js'
import { safeEqual } from '../../lib/crypto.js'
import { knownCurrency } from '../../lib/currencies.js'
import { convert, FxAmountError, FxCurrencyError } from '../../lib/fx.js'
import { newId } from '../../lib/ids.js'
import { onClock, wallTime } from '../../lib/object-clock.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import { callProcessor } from '../../processors/calls.js'
import type { FxQuote } from '../../processors/port.js'
import { availableBalance, requireAccount, type AccountRow } from '../accounts/index.js'
import { requireCard, requireCardProgram, travelActive, type CardRow } from '../cards/index.js'
import { emit } from '../events/index.js'
import { incrementHold, lockAccountRow } from '../ledger/index.js'
import { tokenStatusForCard } from '../network-tokens/index.js'
import {
  decide,
  windowsNeeded,
  windowStart,
  type Decision,
  type SpendingRules,
  type WindowInterval,
} from './decide.js'
import { presentAuthorization } from './present.js'
import * as repo from './repo.js'
import { BatchRules, ruleRecord, type RulesWrite } from './rule-facts.js'
import { adjustCounters } from '../authorization-rules/index.js'
import type { AuthorizationView, SimulateAuthorizationBody } from './schemas.js'
import { SVC_DECISION, type IntegratorOutcome } from './integrator.js'
import type { AuthorizationFxValue, AuthorizationRequestValue, DecisionRecord } from './types.js'
import type { MerchantValue } from '../transactions/index.js'

/** How long an approved authorization holds funds before the hold is released (status `expired`). */
export const HOLD_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000

/** The account row under its lock: every decision and every move of an authorization's money runs under it. */
export async function lockAccount(trx: Db, accountId: string): Promise<AccountRow> {
  const account = await lockAccountRow(trx, accountId)
  if (!account) throw new Error(`account ${accountId} vanished`)
  return account
}

/**
 * The card's spending controls as a decision at `now` applies them. Travel mode (docs/cards.md, "Travel mode") adds
 * its eSIM's current country to a non-empty `allowed_countries` while the eSIM's bundle is valid: the card's own
 * copy of both, read with the card (no other read); `blocked_countries` still win.
 */
function controlsOf(
  card: Pick<CardRow, 'spending_controls' | 'travel_country' | 'travel_valid_until'>,
  now: Date,
): SpendingRules {
  const c = (card.spending_controls ?? {}) as Partial<SpendingRules>
  const allowed = c.allowed_countries ?? []
  const travel = card.travel_country
  return {
    spending_limits: c.spending_limits ?? [],
    allowed_mccs: c.allowed_mccs ?? [],
    blocked_mccs: c.blocked_mccs ?? [],
    allowed_countries:
      allowed.length > 0 && travel !== null && travelActive(card, now) && !allowed.includes(travel)
        ? [...allowed, travel]
        : allowed,
    blocked_countries: c.blocked_countries ?? [],
  }
}

/** Approved spend of the card in each window its limits use (nothing is read when it has none). */
async function spentInWindows(
  trx: Db,
  card: Pick<CardRow, 'id'>,
  rules: SpendingRules,
  now: Date,
  onClock = false,
) {
  const windows = windowsNeeded(rules)
  return windows.length === 0
    ? {}
    : repo.spendSince(
        trx,
        card.id,
        windows.map((interval) => ({ interval, from: windowStart(interval, now) })),
        onClock,
      )
}

/**
 * A security code presented with the request, checked against the processor: one call, before and outside
 * any database transaction, only on an issued card. Null: no code presented.
 */
async function checkCvc(
  deps: AppDeps,
  card: CardRow,
  cvc: string | undefined,
): Promise<{ matches: boolean; operationId: string } | null> {
  if (cvc === undefined || card.processor_reference === null) return null
  const processor = deps.processors.forProgram(await requireCardProgram(deps.db, card))
  const scope = scopeOfRow(card)
  const reference = card.processor_reference
  const call = await callProcessor(
    deps,
    scope,
    { processor: processor.name, operation: 'reveal_details', subjectId: card.id },
    () => processor.revealDetails(scope, reference),
  )
  return { matches: safeEqual(call.result.cvc, cvc), operationId: call.operationId }
}

/** Whether a presented expiry is the card's; null when none was presented. */
function expiryMatches(
  card: Pick<CardRow, 'exp_month' | 'exp_year'>,
  body: SimulateAuthorizationBody,
): boolean | null {
  if (body.exp_month === undefined && body.exp_year === undefined) return null
  return body.exp_month === card.exp_month && body.exp_year === card.exp_year
}

/** The status of the token the request came through (null without one); a token not of this card is `token_not_found`. */
async function tokenStatus(
  trx: Db,
  ctx: RequestCtx,
  card: Pick<CardRow, 'id'>,
  tokenId: string | null,
): Promise<string | null> {
  if (tokenId === null) return null
  const status = await tokenStatusForCard(trx, ctx, tokenId, card.id)
  if (status === null)
    throw new ApiError('token_not_found', {
      param: 'network_token_id',
      message: `Card ${card.id} has no network token ${tokenId}.`,
    })
  return status
}

function request(
  type: AuthorizationRequestValue['type'],
  amount: number,
  decision: Decision,
  now: Date,
  record: DecisionRecord,
): AuthorizationRequestValue {
  return {
    type,
    amount,
    approved: decision.approved,
    decline_reason: decision.approved ? null : decision.reason,
    created_at: now.toISOString(),
    decision: record,
    ...ruleRecord(decision),
  }
}

/**
 * The service's rules, then the integrator's answer: a request the rules decline is declined with their reason
 * (the integrator's approval does not override them: the balance is checked again when the hold is written); one
 * they approve takes the integrator's decline. The record names who decided: `svc` when the rules declined at
 * the write although the integrator (or stand-in) approved, keeping the latency of the call made.
 */
function withIntegrator(
  decision: Decision,
  integrator: IntegratorOutcome | null | undefined,
): { decision: Decision; record: DecisionRecord } {
  if (!integrator) return { decision, record: SVC_DECISION }
  if (!decision.approved)
    return { decision, record: { source: 'svc', latency_ms: integrator.decision.latency_ms } }
  if (integrator.decline)
    return {
      decision: { approved: false, reason: integrator.decline, rules: decision.rules },
      record: integrator.decision,
    }
  return { decision, record: integrator.decision }
}

/** A new authorization as the network presented it, checked and normalized once, decided as often as needed. */
export interface PresentedAuthorization {
  id: string
  /**
   * When the network presented it: the authorization's created_at (on its sandbox clock's time under one), and, on
   * wall time, the time its id is made from.
   */
  at: Date
  /** The sandbox clock it is decided on (`decideOnClock`: its card's cardholder is on one); absent: wall time. */
  clockId?: string
  ctx: RequestCtx
  body: SimulateAuthorizationBody
  /** The merchant's currency, upper-cased (the account's, or another one to convert from). */
  currency: string
  merchant: MerchantValue
  cvc: { matches: boolean; operationId: string } | null
  /** The request's Idempotency-Key, whose answer is stored with the decision. */
  answer: AnswerToStore | null
  /** What the organization's authorization endpoint decided (asked before the batch); absent: the service decides alone. */
  integrator?: IntegratorOutcome
  /**
   * The rate of a spend in another currency than the account's, once asked of the processor: kept so that a decision
   * decided again (a stale batch, the locked path) converts at the same rate without asking again. `checked`: the
   * request has been through the conversion step once (its rate, if it needs one, is here).
   */
  fx?: { checked: boolean; quote?: FxQuote & { quoteCurrency: string } }
}

/** A spend converted into its account's currency: the amount decided on, and what the row records. */
interface Converted {
  amount: number
  fx: AuthorizationFxValue
}

/** What became of one decision of a batch: written, refused with an error, or to decide again (`stale`). */
export type DecisionOutcome =
  | { view: AuthorizationView }
  | { error: unknown }
  | { stale: true }
  /** Its card is under sandbox clock `clock`: it is decided on the clock's time instead (`decideOnClock`). */
  | { clock: string }

/** A request normalized for deciding: its id and time, and the security code checked (one processor call, outside any transaction). */
export async function presentRequest(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SimulateAuthorizationBody,
): Promise<PresentedAuthorization> {
  const at = deps.clock.now()
  return {
    id: newId('auth', at),
    at,
    ctx,
    body,
    currency: body.currency.toUpperCase(),
    merchant: {
      name: body.merchant.name,
      mcc: body.merchant.mcc ?? null,
      city: body.merchant.city ?? null,
      country: body.merchant.country?.toUpperCase() ?? null,
    },
    cvc:
      body.cvc === undefined
        ? null
        : await checkCvc(deps, await requireCard(deps.db, ctx, body.card_id, 'card_id'), body.cvc),
    answer: answerToStore(201, deps.unit?.key),
  }
}

/**
 * The tenants (organization and environment) this process last saw with an enabled authorization rule. A decision
 * for a tenant not in it reads without the rules (`readDecisionFacts(…, rules: false)`), a smaller statement; the
 * read says whether the tenant has a rule after all (one made since, perhaps through another process), and then it
 * is read again with them in the same transaction: exact, whatever this set says, and the set follows each read.
 */
const tenantsWithRules = new Set<string>()

function tenantKey(organizationId: string, environment: string): string {
  return `${organizationId}|${environment}`
}

/** `repo.readDecisionFacts`, with the rules only for tenants that have some (`tenantsWithRules`). */
async function readFacts(
  db: Db,
  cardIds: readonly string[],
  lock: boolean,
  now: Date,
  tenants: readonly string[],
): Promise<Map<string, repo.DecisionFacts>> {
  const rules = tenants.some((t) => tenantsWithRules.has(t))
  // The cards' sandbox clocks, read in the same statement, only where clocks exist (the sandbox).
  const clocks = tenants.some((t) => t.endsWith('|sandbox'))
  let facts = await repo.readDecisionFacts(db, cardIds, lock, now, rules, clocks)
  const found = [...facts.values()]
  if (!rules && found.some((f) => f.rulesExist))
    facts = await repo.readDecisionFacts(db, cardIds, lock, now, true, clocks)
  for (const f of found) {
    const key = tenantKey(f.card.organization_id, f.card.environment)
    if (f.rulesExist) tenantsWithRules.add(key)
    else tenantsWithRules.delete(key)
  }
  return facts
}

/** Runs `fn` for the batch's request `i`: an error it throws becomes that request's outcome (undefined returned). */
async function settled<T>(
  outcomes: (DecisionOutcome | undefined)[],
  i: number,
  fn: () => T | Promise<T>,
): Promise<T | undefined> {
  try {
    return await fn()
  } catch (error) {
    outcomes[i] = { error }
    return undefined
  }
}

/**
 * Decides new authorizations together (`DecisionBatcher`): one read of every card and account, each card's
 * spend in its windows and each token's status, the rules of `decide` for each in order (an account's
 * approvals in the batch count against its available balance, a card's against its limits), then one
 * statement for all of them (`repo.recordDecisions`): approved, a hold on the account; declined, the reason.
 * An account changed since the read (`lock` false) writes none of its decisions: they come back `stale`, to
 * decide again. With `lock`, the accounts are read under their row locks in the caller's transaction, so
 * nothing can change before the write.
 */
export async function decideBatch(
  deps: AppDeps,
  db: Db,
  batch: readonly PresentedAuthorization[],
  lock: boolean,
  clockId: string | null = null,
): Promise<DecisionOutcome[]> {
  // Under a sandbox clock (`decideOnClock`), `now` is the clock's time; the events stay on wall time.
  const now = deps.clock.now()
  const wall = wallTime(clockId, now)
  const { outcomes, evaluated } = await evaluateBatch(deps, db, batch, lock, now, clockId)
  const writes: repo.DecisionWrite[] = []
  const written: number[] = []
  evaluated.forEach((e, i) => {
    if (!e) return
    const row = authorizationRow(batch[i], e, e.decision, e.record)
    writes.push({
      row,
      view: presentAuthorization(row),
      eventId: newId('evt', wall),
      entryId: e.decision.approved ? newId('le') : null,
      versions: e.versions,
      operationId: batch[i].cvc?.operationId ?? null,
      answer: batch[i].answer,
      clockId,
      ...e.rules,
    })
    written.push(i)
  })

  const { stale, notified } = await repo.recordDecisions(db, writes, now, wall)
  if (notified) signalJobsQueued()
  written.forEach((i, k) => {
    const { row, view } = writes[k]
    outcomes[i] = stale.has(row.account_id) ? { stale: true } : { view: view as AuthorizationView }
  })
  return outcomes as DecisionOutcome[]
}

/** One request of a batch decided, before anything is written. */
interface Evaluated {
  card: repo.DecisionCard
  accountId: string
  accountCurrency: string
  /** The conversion into the account's currency; null when the merchant asked in it (or foreign spend is blocked). */
  converted: Converted | null
  versions: repo.DecisionFacts['versions']
  decision: Decision
  record: DecisionRecord
  /** What the write guards and adds for the authorization rules (velocity counters, the card's activity). */
  rules: RulesWrite
}

/**
 * The reads and rules of `decideBatch`, writing nothing: each request's decision (with its integrator's answer,
 * if it has one), or the error it met. The pre-check of the integrator path runs it alone, outside any transaction.
 */
async function evaluateBatch(
  deps: AppDeps,
  db: Db,
  batch: readonly PresentedAuthorization[],
  lock: boolean,
  now: Date,
  clockId: string | null = null,
): Promise<{ outcomes: (DecisionOutcome | undefined)[]; evaluated: (Evaluated | undefined)[] }> {
  const outcomes: (DecisionOutcome | undefined)[] = new Array(batch.length)
  const evaluated: (Evaluated | undefined)[] = new Array(batch.length)
  const cardIds = [...new Set(batch.map((p) => p.body.card_id))]
  const tenants = batch.map((p) => tenantKey(p.ctx.organizationId, p.ctx.environment))
  let facts = await readFacts(db, cardIds, lock, now, tenants)
  // Under the locks, a velocity counter another statement made as this one read could not be locked (nor read): read
  // again, now that it is there to see.
  if (
    lock &&
    [...facts.values()].some((f) => [...f.counters.values()].some((c) => c.guarded && !c.version))
  )
    facts = await readFacts(db, cardIds, lock, now, tenants)
  const owned = await Promise.all(
    batch.map((p, i) =>
      settled(outcomes, i, () => {
        const found = facts.get(p.body.card_id)
        requireOwned(found?.card, p.ctx, 'card_not_found', 'card_id')
        return found!
      }),
    ),
  )
  // A card under another sandbox clock than the one this runs on is decided on its clock's time (`decideOnClock`).
  owned.forEach((f, i) => {
    if (f?.clockId && f.clockId !== clockId) {
      outcomes[i] = { clock: f.clockId }
      owned[i] = undefined
    }
  })
  const cards = new Map<string, repo.DecisionCard>()
  for (const f of owned) if (f) cards.set(f.card.id, f.card)
  const spent = new Map<string, Partial<Record<WindowInterval, number>>>()
  await Promise.all(
    [...cards.values()].map(async (card) =>
      spent.set(
        card.id,
        await spentInWindows(db, card, controlsOf(card, now), now, clockId !== null),
      ),
    ),
  )
  const tokens = await Promise.all(
    batch.map(
      (p, i) =>
        owned[i] &&
        settled(outcomes, i, () =>
          tokenStatus(db, p.ctx, owned[i]!.card, p.body.network_token_id ?? null),
        ),
    ),
  )

  // After the token reads: a request that already failed asks no rate. The simulators answer from the pins the
  // facts carry (no statement); one quote per currency pair and tenant for the whole batch.
  const quotes: BatchQuotes = new Map()
  const converted = await Promise.all(
    batch.map((p, i) =>
      owned[i] && !outcomes[i]
        ? settled(outcomes, i, () => convertRequest(deps, p, owned[i]!, quotes))
        : undefined,
    ),
  )

  /** What this batch's approvals so far take: from each account's available balance, and each card's windows. */
  const heldInBatch = new Map<string, number>()
  const spentInBatch = new Map<string, number>()
  /** The rules' view of the batch: each card's last hour and each velocity counter with the approvals so far. */
  const batchRules = new BatchRules(now)
  batch.forEach((p, i) => {
    const f = owned[i]
    if (!f || outcomes[i]) return
    const { card, account, versions } = f
    const conversion = converted[i] ?? null
    const rules = controlsOf(card, now)
    const before = spentInBatch.get(card.id) ?? 0
    const windows = Object.fromEntries(
      Object.entries(spent.get(card.id) ?? {}).map(([w, n]) => [w, n + before]),
    )
    // A partial approval by the integrator holds (and is checked for) only the amount it approved (in the
    // account's currency: the integrator was sent the authorization with `amount` converted).
    const amount = p.integrator?.amount ?? conversion?.amount ?? p.body.amount
    const judged = batchRules.judge(f, {
      merchant: p.merchant,
      merchantCurrency: p.currency,
      amount,
      merchantAmount: p.body.amount,
    })
    const { decision, record } = withIntegrator(
      decide({
        amount,
        currency: conversion ? account.currency : p.currency,
        merchant: p.merchant,
        card: {
          status: card.status,
          expMonth: card.exp_month,
          expYear: card.exp_year,
          controls: rules,
        },
        account: {
          status: account.status,
          currency: account.currency,
          available: availableBalance(account) - (heldInBatch.get(account.id) ?? 0),
        },
        tokenStatus: tokens[i] ?? null,
        expiryMatches: expiryMatches(card, p.body),
        cvcMatches: p.cvc?.matches ?? null,
        spent: windows,
        alreadyAuthorized: 0,
        rules: judged.input,
        now,
      }),
      p.integrator,
    )
    if (decision.approved) {
      heldInBatch.set(account.id, (heldInBatch.get(account.id) ?? 0) + amount)
      spentInBatch.set(card.id, before + amount)
    }
    evaluated[i] = {
      card,
      accountId: account.id,
      accountCurrency: account.currency,
      converted: conversion,
      versions,
      decision,
      record,
      rules: batchRules.decided(f, judged.facts, decision, amount, p.at),
    }
  })
  return { outcomes, evaluated }
}

/**
 * The service's rules for a new authorization, read-only and outside any transaction: the authorization as it
 * would be written if they approve (status pending, approved, no hold yet), what the integrator is asked about;
 * null when they decline or the request fails (then it is decided as if no endpoint existed, and never sent).
 */
export async function precheck(
  deps: AppDeps,
  p: PresentedAuthorization,
): Promise<AuthorizationView | null> {
  const first = await evaluateBatch(deps, deps.db, [p], false, deps.clock.now())
  // A card under a sandbox clock is judged on the clock's time, as it will be decided (`decideOnClock`).
  const outcome = first.outcomes[0]
  const clockId = outcome && 'clock' in outcome ? outcome.clock : null
  const clocked = clockId ? await presentOnClock(deps, p, clockId) : deps
  const { evaluated } = clockId
    ? await evaluateBatch(clocked, clocked.db, [p], false, clocked.clock.now(), clockId)
    : first
  const e = evaluated[0]
  if (!e || !e.decision.approved) return null
  const row = authorizationRow(p, e, e.decision, { source: 'integrator', latency_ms: 0 })
  return presentAuthorization({ ...row, held_amount: 0, hold_id: null, expires_at: null })
}

/**
 * The authorization row a decision writes: approved, pending with a hold for the amount; declined, with its reason.
 * `amount` and `currency` are the account's (converted when the merchant asked in another currency);
 * `merchant_amount` and `merchant_currency` what the merchant asked (for a same-currency spend, `amount` itself).
 */
function authorizationRow(
  p: PresentedAuthorization,
  e: Pick<Evaluated, 'card' | 'accountId' | 'accountCurrency' | 'converted' | 'rules'>,
  decision: Decision,
  record: DecisionRecord,
): repo.AuthorizationRow {
  const { body, at } = p
  const { card, converted } = e
  const asked = converted?.amount ?? body.amount
  const held = p.integrator?.amount ?? asked
  const amount = decision.approved ? held : asked
  return {
    id: p.id,
    organization_id: card.organization_id,
    environment: card.environment,
    program_id: card.program_id,
    card_id: card.id,
    account_id: e.accountId,
    network_token_id: body.network_token_id ?? null,
    status: decision.approved ? 'pending' : 'declined',
    approved: decision.approved,
    amount,
    held_amount: decision.approved ? held : 0,
    captured_amount: 0,
    reversed_amount: 0,
    currency: converted ? e.accountCurrency : p.currency,
    merchant_amount: converted ? body.amount : amount,
    merchant_currency: p.currency,
    fx: converted ? converted.fx : null,
    merchant: p.merchant,
    decline_reason: decision.approved ? null : decision.reason,
    ...ruleRecord(decision),
    rule_counters: decision.approved ? e.rules.counts.map((c) => [c.key, c.bucket] as const) : [],
    hold_id: decision.approved ? newId('hold') : null,
    request_history: [request('authorization', body.amount, decision, at, record)],
    decision: record,
    expires_at: decision.approved ? new Date(at.getTime() + HOLD_LIFETIME_MS) : null,
    created_at: at,
    updated_at: at,
  }
}

/** A batch's processor quotes, by processor, tenant and currency pair (`quoteKey`). */
type BatchQuotes = Map<string, Promise<FxQuote>>

/**
 * A spend in another currency than its account's, converted (docs/fx.md): null when the merchant asked in the
 * account's currency, or when the program blocks foreign spend (then `decide` declines `currency_mismatch`, and
 * nothing is converted). A currency the service does not know is `400 invalid_parameter` naming `currency`; a
 * converted amount beyond the limit, or one that comes to 0, names `amount`. The rate is asked of the card's
 * program's processor once per request (kept on `p` for a decision decided again).
 */
async function convertRequest(
  deps: AppDeps,
  p: PresentedAuthorization,
  facts: repo.DecisionFacts,
  quotes: BatchQuotes = new Map(),
): Promise<Converted | null> {
  const { account, program } = facts
  p.fx = { checked: true, quote: p.fx?.quote }
  if (p.currency === account.currency) return null
  try {
    if (!knownCurrency(p.currency)) throw new FxCurrencyError(p.body.currency)
    if (program?.foreign_spend !== 'allowed') {
      if (program) return null
      throw new ApiError('program_not_provisioned', {
        message: `The program of card ${facts.card.id} is not attached in this environment.`,
      })
    }
    let quote = p.fx?.quote
    if (!quote || quote.quoteCurrency !== account.currency) {
      const processor = deps.processors.forProgram(program)
      const scope = scopeOfRow(facts.card)
      const key = [
        processor.name,
        scope.organizationId,
        scope.environment,
        p.currency,
        account.currency,
      ].join('|')
      let asked = quotes.get(key)
      if (!asked) {
        const carried = { sandboxPins: facts.sandboxPins }
        asked = processor.fxRate(scope, p.currency, account.currency, p.at, carried)
        quotes.set(key, asked)
      }
      quote = { ...(await asked), quoteCurrency: account.currency }
    }
    p.fx.quote = quote
    const out = convertAtQuote(quote, {
      amount: p.body.amount,
      from: p.currency,
      to: account.currency,
      markupBps: program.fx_markup_bps,
    })
    if (out.amount <= 0) {
      throw new FxAmountError(
        'out_of_range',
        `amount converts to 0 ${account.currency}: too small to authorize.`,
      )
    }
    return out
  } catch (err) {
    return fxRefusal(err)
  }
}

/**
 * One decision under its account's row lock, in a transaction of its own: the path a decision takes after
 * losing the race to a changed account a few times, so a hot account contended across processes still
 * makes progress.
 */
export async function decideLocked(
  deps: AppDeps,
  p: PresentedAuthorization,
): Promise<AuthorizationView> {
  const clockId = p.clockId ?? null
  // A rate is asked of the processor outside the transaction (a simulator reads its pins through the platform's
  // handle): a request not yet through the conversion step goes through it once, read-only, first.
  if (!p.fx?.checked) await evaluateBatch(deps, deps.db, [p], false, deps.clock.now(), clockId)
  const outcome = await withTx(deps.db, async (trx) => {
    const [outcome] = await decideBatch(deps, trx, [p], true, clockId)
    if ('error' in outcome) throw outcome.error
    if ('stale' in outcome)
      throw new Error(`authorization ${p.id} not written under its account's lock`)
    return outcome
  })
  if ('clock' in outcome) return decideOnClock(deps, p, outcome.clock)
  return outcome.view
}

/**
 * A request whose card is under sandbox clock `clockId` (docs/sandbox-clocks.md), made ready to decide on the clock's
 * time: `at` (its created_at, and the start of its hold's 7 days) is the clock's time; its id stays on wall time.
 * Answers the dependencies whose clock reads the sandbox clock.
 */
async function presentOnClock(
  deps: AppDeps,
  p: PresentedAuthorization,
  clockId: string,
): Promise<AppDeps> {
  const clocked = await onClock(deps, clockId)
  p.at = clocked.clock.now()
  p.clockId = clockId
  return clocked
}

/**
 * Decides a request on its card's sandbox clock, alone under its account's row lock: its time, the windows of its
 * card's limits and rules, and its hold's expiry are the clock's. Only cards under a clock come here (the facts'
 * read names the clock), so an organization without clocks never does.
 */
export async function decideOnClock(
  deps: AppDeps,
  p: PresentedAuthorization,
  clockId: string,
): Promise<AuthorizationView> {
  const clocked = await presentOnClock(deps, p, clockId)
  return decideLocked(clocked, p)
}

/**
 * An amount the merchant sends on an existing authorization (an increment, a partial reversal), in the
 * account's currency: as it is when the authorization needed no conversion, else converted at the rate and markup
 * the authorization recorded (docs/fx.md, "Increments and reversals"). A result beyond the limit, or one that comes
 * to 0, is `400 invalid_parameter` naming `amount`.
 */
export function inAccountCurrency(
  auth: Pick<repo.AuthorizationRow, 'fx' | 'merchant_currency' | 'currency'>,
  amount: number,
): { amount: number; feeAmount: number } {
  if (auth.fx === null) return { amount, feeAmount: 0 }
  try {
    const out = convert({
      amount,
      from: auth.merchant_currency,
      to: auth.currency,
      rate: auth.fx.rate,
      markupBps: auth.fx.markup_bps,
    })
    if (out.amount <= 0) {
      throw new FxAmountError(
        'out_of_range',
        `amount converts to 0 ${auth.currency}: too small to apply.`,
      )
    }
    return out
  } catch (err) {
    return fxRefusal(err)
  }
}

/** The authorization's conversion record with `feeAmount` more of markup (unchanged without a conversion). */
function feeAdded(fx: AuthorizationFxValue | null, feeAmount: number): AuthorizationFxValue | null {
  return fx === null ? null : { ...fx, fee_amount: Number(fx.fee_amount) + feeAmount }
}

/**
 * The service's rules for an increment of `amount` (the account's currency; `merchantAmount` the merchant's) on `auth`
 * (per-authorization limits count the new total; the authorization rules judge the increase).
 */
async function incrementRules(
  db: Db,
  ctx: RequestCtx,
  auth: repo.AuthorizationRow,
  card: CardRow,
  account: AccountRow,
  amount: number,
  merchantAmount: number,
  now: Date,
  lock: boolean,
  onClock = false,
): Promise<Decision> {
  const rules = controlsOf(card, now)
  // Under the account's lock (the increment's transaction), the card's velocity counters are locked too: another
  // account's decisions (a cardholder's limit) wait for this one.
  const tenant = tenantKey(card.organization_id, card.environment)
  const facts = (await readFacts(db, [card.id], lock, now, [tenant])).get(card.id)
  const judged =
    facts &&
    new BatchRules(now).judge(facts, {
      merchant: auth.merchant,
      merchantCurrency: auth.merchant_currency,
      amount,
      merchantAmount,
      increment: true,
    })
  return decide({
    amount,
    currency: auth.currency,
    merchant: auth.merchant,
    card: {
      status: card.status,
      expMonth: card.exp_month,
      expYear: card.exp_year,
      controls: rules,
    },
    account: {
      status: account.status,
      currency: account.currency,
      available: availableBalance(account),
    },
    tokenStatus: await tokenStatus(db, ctx, card, auth.network_token_id),
    expiryMatches: null,
    cvcMatches: null,
    spent: await spentInWindows(db, card, rules, now, onClock),
    alreadyAuthorized: Number(auth.amount),
    rules: judged?.input,
    now,
  })
}

/**
 * The service's rules for an increment, read-only and outside any transaction: the authorization as it would be
 * written if they approve (amount raised, status pending, approved, the hold not raised yet), what the integrator
 * is asked about; null when they decline or the request fails (then it is decided as if no endpoint existed).
 */
export async function precheckIncrement(
  deps: AppDeps,
  ctx: RequestCtx,
  auth: repo.AuthorizationRow,
  card: CardRow,
  amount: number,
  clockId: string | null = null,
): Promise<AuthorizationView | null> {
  if (auth.status !== 'pending') return null
  try {
    const now = deps.clock.now()
    const converted = inAccountCurrency(auth, amount)
    const account = await requireAccount(deps.db, ctx, card.account_id)
    const decision = await incrementRules(
      deps.db,
      ctx,
      auth,
      card,
      account,
      converted.amount,
      amount,
      now,
      false,
      clockId !== null,
    )
    if (!decision.approved) return null
    return presentAuthorization({
      ...auth,
      amount: Number(auth.amount) + converted.amount,
      merchant_amount: Number(auth.merchant_amount) + amount,
      fx: feeAdded(auth.fx, converted.feeAmount),
      updated_at: now,
      decision: { source: 'integrator', latency_ms: 0 },
    })
  } catch {
    return null
  }
}

/**
 * An incremental authorization: `amount` is in the merchant's currency (converted at the authorization's recorded
 * rate and markup when it is foreign; `merchant_amount` grows by it, `amount` and the hold by the converted amount,
 * `fx.fee_amount` by its markup). The same rules decide the increase (per-authorization limits count the
 * new total), then the integrator's answer if it was asked (`integrator`; a partial approval raises by its
 * amount). Approved, the hold and `amount` grow; declined, nothing moves. Either way the request is
 * appended to `request_history`, the authorization's `decision` is the increment's, and authorization.updated is emitted.
 */
export async function incrementAuthorization(
  deps: AppDeps,
  ctx: RequestCtx,
  authorizationId: string,
  amount: number,
  card: CardRow,
  integrator?: IntegratorOutcome,
  clockId: string | null = null,
): Promise<AuthorizationView> {
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const account = await lockAccount(trx, card.account_id)
    const auth = (await repo.findAuthorization(trx, authorizationId))!
    requirePending(auth, 'incremented')
    // `amount` is the merchant's (its currency); a partial approval by the integrator is in the account's.
    const converted = inAccountCurrency(auth, amount)
    const raise = integrator?.amount ?? converted.amount
    let { decision, record } = withIntegrator(
      await incrementRules(
        trx,
        ctx,
        auth,
        card,
        account,
        raise,
        amount,
        now,
        true,
        clockId !== null,
      ),
      integrator,
    )
    if (decision.approved) {
      const raised = await incrementHold(trx, auth.hold_id!, raise, now)
      if (!raised.approved) {
        decision = { approved: false, reason: raised.reason, rules: decision.rules }
        record = integrator
          ? { source: 'svc', latency_ms: integrator.decision.latency_ms }
          : SVC_DECISION
      }
    }
    // The increase counts where the authorization counts (its velocity counters' buckets), as its spend does.
    if (decision.approved) await adjustCounters(trx, auth.rule_counters, raise, now)
    const row = await repo.updateAuthorization(
      trx,
      auth.id,
      decision.approved
        ? {
            amount: Number(auth.amount) + raise,
            held_amount: Number(auth.held_amount) + raise,
            merchant_amount: Number(auth.merchant_amount) + (auth.fx === null ? raise : amount),
            ...(auth.fx === null ? {} : { fx: json(feeAdded(auth.fx, converted.feeAmount)) }),
            updated_at: now,
            decision: json(record),
            rule_results: json(ruleRecord(decision).rule_results),
          }
        : {
            updated_at: now,
            decision: json(record),
            rule_results: json(ruleRecord(decision).rule_results),
          },
      request('increment', amount, decision, now, record),
    )
    const view = presentAuthorization(row)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'authorization.updated', view, now)
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
