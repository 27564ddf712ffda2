import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { isUniqueViolation, withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { ApiError, isApiError } from '../../http/errors.js'
import { requireOwned, requireOwnedOnClock } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { enqueue } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { requireAccount } from '../accounts/index.js'
import { mergeMetadata, requireCardholder } from '../cardholders/index.js'
import { emit } from '../events/index.js'
import { kycRefusal } from '../kyc/index.js'
import { findProgram, type ProgramRow } from '../programs/index.js'
import { cardLimitReached, checkIssuance, type IssuanceFacts } from './issuance-check.js'
import { planMove, type CardOperation, type CardStatus, type FormFactor } from './lifecycle.js'
import { presentCard } from './present.js'
import * as repo from './repo.js'
import type { CardCreateBody, CardUpdateBody, CardView } from './schemas.js'
import {
  assertSpendControlsSupported,
  emptySpendingControls,
  mergeSpendingControls,
} from './spending-controls.js'
import { TRAVEL_OFF, travelColumnsFor } from './travel.js'

export { presentCard } from './present.js'
export type { CardRow } from './repo.js'

/** Job that asks the processor to issue a pending card (see issuance.ts). */
export const CARD_ISSUE_JOB = 'card.issue' satisfies JobType

/** True when the scope has issued at least one card (the console's getting-started checklist). */
export function hasCard(db: Db, scope: Scope): Promise<boolean> {
  return repo.anyCard(db, scope.organizationId, scope.environment)
}

/**
 * The caller's card by id: another organization's card answers exactly like a missing one. `param` names the
 * body field when the id came in the body (`card_id`), not in the path.
 */
export async function requireCard(
  db: Db,
  ctx: Scope,
  cardId: string,
  param?: string,
): Promise<repo.CardRow> {
  const row = isId('card', cardId) ? await repo.findCard(db, cardId) : undefined
  return requireOwned(row, ctx, 'card_not_found', param)
}

/**
 * `requireCard` with the dependencies the card's objects move on: under a sandbox clock (its cardholder is on one),
 * `deps.clock` reads the clock's time and `clockId` names it; otherwise `deps` itself. The clock is read with the
 * card, in its statement, and only in the sandbox (production has no clock).
 */
export async function requireCardOnClock(
  deps: AppDeps,
  ctx: Scope,
  cardId: string,
  param?: string,
): Promise<{ card: repo.CardRow; deps: AppDeps; clockId: string | null }> {
  if (ctx.environment !== 'sandbox')
    return { card: await requireCard(deps.db, ctx, cardId, param), deps, clockId: null }
  const found = isId('card', cardId) ? await repo.findCardWithClock(deps.db, cardId) : undefined
  const { row: card, ...on } = await requireOwnedOnClock(deps, found, ctx, 'card_not_found', param)
  return { card, ...on }
}

/** Throws the state table's named refusal when `op` is not allowed on the card as it is now. */
export function assertMove(card: repo.CardRow, op: CardOperation): CardStatus {
  const move = planMove(card.status as CardStatus, card.form_factor as FormFactor, op)
  if (!move.ok) throw new ApiError(move.code, { message: move.message })
  return move.next
}

/**
 * The program behind the card in the path, for capability mounting. Null unless the card is the caller's
 * in this environment, so a stranger's card never reveals its program through a 404 `not_found`.
 */
export async function cardProgramOf(
  deps: AppDeps,
  req: FastifyRequest,
): Promise<{ capabilities: readonly string[] } | null> {
  const cardId = (req.params as { card_id?: string }).card_id
  if (!req.ctx || !cardId || !isId('card', cardId)) return null
  const card = await repo.findCard(deps.db, cardId)
  if (
    !card ||
    card.organization_id !== req.ctx.organizationId ||
    card.environment !== req.ctx.environment
  )
    return null
  const program = await findProgram(deps.db, card.program_id)
  return program ? { capabilities: program.capabilities } : null
}

export async function requireCardProgram(db: Db, card: repo.CardRow): Promise<ProgramRow> {
  const program = await findProgram(db, card.program_id)
  if (!program)
    throw new ApiError('program_not_provisioned', {
      message: `The program of card ${card.id} is not attached in this environment.`,
    })
  return program
}

/**
 * Everything issuance decides on, each row read once: the cardholder (a missing one is refused at once, first in
 * the order), the funding account or the refusal its lookup answers, the account's program and processor, the KYC
 * gate for that program, and whether the program's one card is already taken.
 */
async function readIssuanceFacts(
  deps: AppDeps,
  ctx: RequestCtx,
  body: CardCreateBody,
): Promise<IssuanceFacts> {
  const cardholder = await requireCardholder(deps.db, ctx, body.cardholder_id, 'cardholder_id')
  const account = await requireAccount(deps.db, ctx, body.account_id, 'account_id').catch(refusal)
  const program = isApiError(account)
    ? null
    : ((await findProgram(deps.db, account.program_id)) ?? null)
  const evidence = program ?? { identity_evidence_required: false }
  return {
    cardholder,
    account,
    program,
    processor: program ? answerOrRefusal(() => deps.processors.forProgram(program)) : null,
    kycRefusal: await kycRefusal(
      deps.db,
      cardholder,
      // KYC's expiry is judged on the cardholder's sandbox clock when it is on one.
      (await onClock(deps, cardholder.clock_id)).clock.now(),
      evidence,
      'cardholder_id',
    ),
    slotTaken: program?.one_card_per_cardholder
      ? await repo.slotTaken(deps.db, program.id, cardholder.id)
      : false,
  }
}

/** An ApiError as the value it is; anything else rethrown. */
function refusal(err: unknown): ApiError {
  if (isApiError(err)) return err
  throw err
}

function answerOrRefusal<T>(read: () => T): T | ApiError {
  try {
    return read()
  } catch (err) {
    return refusal(err)
  }
}

/**
 * Issues a card. The body's spending controls are read first; then the facts (`readIssuanceFacts`) and the rules
 * in their stable order (`checkIssuance`: cardholder, identity document, address, KYC, funding account, program
 * rules, the one-card limit, spending controls). The card is written `pending`; a job has the processor issue it.
 */
export async function createCard(
  deps: AppDeps,
  ctx: RequestCtx,
  body: CardCreateBody,
): Promise<CardView> {
  const controls = mergeSpendingControls(emptySpendingControls(), body.spending_controls)
  const check = checkIssuance(await readIssuanceFacts(deps, ctx, body), body, controls)
  if (!check.ok) throw check.error
  const { cardholder, account, program, processor, embossedName, deliveryAddress, holdsSlot } =
    check.plan

  // A cardholder on a sandbox clock: the card is made on the clock's time (docs/sandbox-clocks.md).
  const clockId = cardholder.clock_id ?? null
  const now = (await onClock(deps, clockId)).clock.now()
  try {
    return await withTx(deps.db, async (trx) => {
      const travel = body.travel_mode
        ? await travelColumnsFor(trx, deps.hooks, ctx, cardholder.id, body.travel_mode)
        : TRAVEL_OFF
      const row = await repo.insertCard(trx, {
        id: newId('card'),
        organization_id: ctx.organizationId,
        environment: ctx.environment,
        program_id: program.id,
        cardholder_id: cardholder.id,
        account_id: account.id,
        processor: processor.name,
        form_factor: body.form_factor,
        card_type: body.card_type,
        brand: program.card_brand,
        status: 'pending',
        processor_reference: null,
        last4: null,
        exp_month: null,
        exp_year: null,
        embossed_name: embossedName,
        delivery_address: json(deliveryAddress),
        shipping: initialShipping(body.form_factor),
        spending_controls: json(controls),
        metadata: json(body.metadata ?? {}),
        pin_set: false,
        replacement_for: null,
        replacement_reason: null,
        replaced_by: null,
        holds_card_slot: holdsSlot,
        ...travel,
        issued_at: null,
        closed_at: null,
        created_at: now,
        updated_at: now,
      })
      return announceNewCard(trx, row, now, deps.config.cardIssueDelayMs, clockId)
    })
  } catch (err) {
    // Two requests raced past the check above: the unique index let exactly one of them in.
    if (isUniqueViolation(err, 'cards_one_per_cardholder')) throw cardLimitReached(program)
    throw err
  }
}

/** Physical cards carry their shipping from the start (`pending` until the simulator ships them); virtual ones none. */
export function initialShipping(formFactor: string): string | null {
  return formFactor === 'physical'
    ? json({ status: 'pending', shipped_at: null, delivered_at: null })
    : null
}

/**
 * Emits `card.created` and queues issuance for a freshly written pending card (also used by replacements). Under a
 * sandbox clock (`clockId`; `now` is its time) the event names the clock, and issuance waits its delay on the clock:
 * its job is due `issueDelayMs` after `now` on the clock's time and runs in the clock's advance.
 */
export async function announceNewCard(
  trx: Db,
  row: repo.CardRow,
  now: Date,
  issueDelayMs: number,
  clockId: string | null = null,
): Promise<CardView> {
  const view = presentCard(row, now)
  await emit(trx, { ...scopeOfRow(row), clockId }, 'card.created', view, now)
  await enqueue(trx, {
    type: CARD_ISSUE_JOB,
    payload: clockId ? { card_id: row.id, clock_id: clockId } : { card_id: row.id },
    runAt: new Date(now.getTime() + issueDelayMs),
    ...scopeOfRow(row),
    clockId,
  })
  return view
}

export async function retrieveCard(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
): Promise<CardView> {
  // Its travel mode is judged on the card's sandbox clock when it is on one.
  const { card, deps: clocked } = await requireCardOnClock(deps, ctx, cardId)
  return presentCard(card, clocked.clock.now())
}

export interface CardListFilter {
  cardholder_id?: string
  account_id?: string
  status?: string
}

/** One page of the caller's cards, newest first; also behind the cardholder and account card lists. */
export async function listCards(
  deps: AppDeps,
  ctx: RequestCtx,
  url: string,
  filter: CardListFilter,
  page: PageParams,
): Promise<ListResult<CardView>> {
  const where: repo.CardFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    cardholderId: filter.cardholder_id,
    accountId: filter.account_id,
    status: filter.status,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url,
    page,
    sortKey: (r: repo.CardRow) => r.id,
    fetch: (bounds) => repo.listCards(deps.db, where, bounds),
    present: ({ clock_time, ...row }) =>
      presentCard(row, clock_time ? new Date(clock_time) : deps.clock.now()),
  })
}

/**
 * PATCH: spending controls (supplied keys replace theirs; the processor must be able to enforce the result),
 * travel mode (an eSIM of the card's cardholder, or null: off) and metadata (merged; null or "" removes a key).
 * A closed card refuses with `card_closed`. Emits `card.updated` with the card as it now is.
 */
export async function updateCard(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  body: CardUpdateBody,
): Promise<CardView> {
  // Under a sandbox clock the card's times are the clock's and its event names the clock (docs/sandbox-clocks.md).
  const { card: current, deps: clocked, clockId } = await requireCardOnClock(deps, ctx, cardId)
  assertMove(current, 'update')
  const program = await requireCardProgram(deps.db, current)
  const processor = deps.processors.forProgram(program)
  const now = clocked.clock.now()
  return withTx(deps.db, async (trx) => {
    // The eSIM first (under a share lock), then the card: the order in which an eSIM's change reaches its cards.
    const travel =
      body.travel_mode === undefined
        ? {}
        : await travelColumnsFor(trx, deps.hooks, ctx, current.cardholder_id, body.travel_mode)
    const card = (await repo.lockCard(trx, current.id))!
    assertMove(card, 'update')
    const controls = mergeSpendingControls(
      { ...emptySpendingControls(), ...card.spending_controls },
      body.spending_controls,
    )
    if (body.spending_controls !== undefined)
      assertSpendControlsSupported(controls, processor.spendControls)
    const metadata =
      body.metadata === undefined ? card.metadata : mergeMetadata(card.metadata, body.metadata)
    const row = await repo.updateCard(trx, card.id, {
      spending_controls: json(controls),
      metadata: json(metadata),
      ...travel,
      updated_at: now,
    })
    const view = presentCard(row, now)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'card.updated', view, now)
    return view
  })
}
