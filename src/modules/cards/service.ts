import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { isUniqueViolation, withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { ApiError, isApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { enqueue } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { isId, newId } from '../../lib/ids.js'
import { requireAccount, type AccountRow } from '../accounts/index.js'
import { mergeMetadata, cardholderHasAddress, cardholderHasIdentityDocument, requireCardholder } from '../cardholders/index.js'
import { emit } from '../events/index.js'
import { assertKycForProgram } from '../kyc/index.js'
import { findProgram, type ProgramRow } from '../programs/index.js'
import { requireNameAndAddress } from './delivery-address.js'
import { planMove, type CardOperation, type CardStatus, type FormFactor } from './lifecycle.js'
import { presentCard } from './present.js'
import * as repo from './repo.js'
import type { CardCreateBody, CardUpdateBody, CardView } from './schemas.js'
import { assertSpendControlsSupported, emptySpendingControls, mergeSpendingControls } from './spending-controls.js'

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
export async function requireCard(db: Db, ctx: Scope, cardId: string, param?: string): Promise<repo.CardRow> {
  const row = isId('card', cardId) ? await repo.findCard(db, cardId) : undefined
  return requireOwned(row, ctx, 'card_not_found', param)
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
export async function cardProgramOf(deps: AppDeps, req: FastifyRequest): Promise<{ capabilities: readonly string[] } | null> {
  const cardId = (req.params as { card_id?: string }).card_id
  if (!req.ctx || !cardId || !isId('card', cardId)) return null
  const card = await repo.findCard(deps.db, cardId)
  if (!card || card.organization_id !== req.ctx.organizationId || card.environment !== req.ctx.environment) return null
  const program = await findProgram(deps.db, card.program_id)
  return program ? { capabilities: program.capabilities } : null
}

export async function requireCardProgram(db: Db, card: repo.CardRow): Promise<ProgramRow> {
  const program = await findProgram(db, card.program_id)
  if (!program) throw new ApiError('program_not_provisioned', { message: `The program of card ${card.id} is not attached in this environment.` })
  return program
}

/** The funding account when the caller may see it, else null: the stable order reports its absence later. */
async function visibleAccount(deps: AppDeps, ctx: RequestCtx, accountId: string): Promise<AccountRow | null> {
  try {
    return await requireAccount(deps.db, ctx, accountId, 'account_id')
  } catch (err) {
    if (isApiError(err)) return null
    throw err
  }
}

/**
 * Issues a card. Refusals come in one stable order: cardholder, its identity document, address and KYC
 * (identity evidence per the account's program), the funding account (exists, same cardholder, provisioned),
 * then the program's rules: form factor, card type, embossed name, delivery address, the one-card limit
 * and spending controls. The card is written `pending`; a job has the processor issue it.
 */
export async function createCard(deps: AppDeps, ctx: RequestCtx, body: CardCreateBody): Promise<CardView> {
  const controls = mergeSpendingControls(emptySpendingControls(), body.spending_controls)
  const cardholder = await requireCardholder(deps.db, ctx, body.cardholder_id, 'cardholder_id')
  const seenAccount = await visibleAccount(deps, ctx, body.account_id)
  const seenProgram = seenAccount ? await findProgram(deps.db, seenAccount.program_id) : undefined
  if (!cardholderHasIdentityDocument(cardholder)) {
    throw new ApiError('identity_document_required', { param: 'cardholder_id', message: 'The cardholder has no identity document; add one with PATCH /v1/cardholders/{id}.' })
  }
  if (!cardholderHasAddress(cardholder)) {
    throw new ApiError('address_required', { param: 'cardholder_id', message: 'The cardholder has no address; add one before issuing a card.' })
  }
  await assertKycForProgram(deps.db, ctx, deps.clock.now(), cardholder.id, seenProgram ?? { identity_evidence_required: false }, 'cardholder_id')

  const account = await requireAccount(deps.db, ctx, body.account_id, 'account_id')
  if (account.cardholder_id !== cardholder.id) {
    throw new ApiError('account_cardholder_mismatch', { param: 'account_id', message: `Account ${account.id} belongs to another cardholder than ${cardholder.id}.` })
  }
  if (account.upstream_reference === null) {
    throw new ApiError('account_not_provisioned', { param: 'account_id', message: `Account ${account.id} does not exist at the processor yet; retry once has_upstream_reference is true.` })
  }
  const program = seenProgram ?? await findProgram(deps.db, account.program_id)
  if (!program) throw new ApiError('program_not_provisioned', { param: 'account_id' })
  const processor = deps.processors.forProgram(program)

  if (!program.form_factors.includes(body.form_factor)) {
    throw new ApiError('unsupported_form_factor', {
      param: 'form_factor',
      message: `Program ${program.id} does not issue ${body.form_factor} cards; it issues: ${program.form_factors.join(', ')}.`,
    })
  }
  if (!program.card_types.includes(body.card_type)) {
    throw new ApiError('card_type_not_configured', {
      param: 'card_type',
      message: `Program ${program.id} has no ${body.card_type} product; configured: ${program.card_types.join(', ')}.`,
    })
  }
  const { embossedName, deliveryAddress } = requireNameAndAddress(body)
  const limited = program.one_card_per_cardholder
  if (limited && await repo.slotTaken(deps.db, program.id, cardholder.id)) throw cardLimitReached(program)
  assertSpendControlsSupported(controls, processor.spendControls)

  const now = deps.clock.now()
  try {
    return await withTx(deps.db, async (trx) => {
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
        holds_card_slot: limited,
        issued_at: null,
        closed_at: null,
        created_at: now,
        updated_at: now,
      })
      return announceNewCard(trx, row, now, deps.config.cardIssueDelayMs)
    })
  } catch (err) {
    // Two requests raced past the check above: the unique index let exactly one of them in.
    if (isUniqueViolation(err, 'cards_one_per_cardholder')) throw cardLimitReached(program)
    throw err
  }
}

/** Physical cards carry their shipping from the start (`pending` until the simulator ships them); virtual ones none. */
export function initialShipping(formFactor: string): string | null {
  return formFactor === 'physical' ? json({ status: 'pending', shipped_at: null, delivered_at: null }) : null
}

function cardLimitReached(program: ProgramRow): ApiError {
  return new ApiError('card_limit_reached', {
    param: 'cardholder_id',
    message: `Program ${program.id} allows one card per cardholder and this cardholder already has one; close it or replace it instead.`,
  })
}

/** Emits `card.created` and queues issuance for a freshly written pending card (also used by replacements). */
export async function announceNewCard(trx: Db, row: repo.CardRow, now: Date, issueDelayMs: number): Promise<CardView> {
  const view = presentCard(row)
  await emit(trx, scopeOfRow(row), 'card.created', view, now)
  await enqueue(trx, {
    type: CARD_ISSUE_JOB,
    payload: { card_id: row.id },
    runAt: new Date(now.getTime() + issueDelayMs),
    organizationId: row.organization_id,
    environment: row.environment,
  })
  return view
}

export async function retrieveCard(deps: AppDeps, ctx: RequestCtx, cardId: string): Promise<CardView> {
  return presentCard(await requireCard(deps.db, ctx, cardId))
}

export interface CardListFilter { cardholder_id?: string; account_id?: string; status?: string }

/** One page of the caller's cards, newest first; also behind the cardholder and account card lists. */
export async function listCards(deps: AppDeps, ctx: RequestCtx, url: string, filter: CardListFilter, page: PageParams): Promise<ListResult<CardView>> {
  const where: repo.CardFilter = {
    organizationId: ctx.organizationId, environment: ctx.environment,
    cardholderId: filter.cardholder_id, accountId: filter.account_id, status: filter.status,
  }
  return paginate({
    ctx, cursors: deps.cursors, url, page,
    sortKey: (r: repo.CardRow) => r.id,
    fetch: (bounds) => repo.listCards(deps.db, where, bounds),
    present: presentCard,
  })
}

/**
 * PATCH: spending controls (supplied keys replace theirs; the processor must be able to enforce the result)
 * and metadata (merged; null or "" removes a key). A closed card refuses with `card_closed`.
 */
export async function updateCard(deps: AppDeps, ctx: RequestCtx, cardId: string, body: CardUpdateBody): Promise<CardView> {
  const current = await requireCard(deps.db, ctx, cardId)
  assertMove(current, 'update')
  const program = await requireCardProgram(deps.db, current)
  const processor = deps.processors.forProgram(program)
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const card = (await repo.lockCard(trx, current.id))!
    assertMove(card, 'update')
    const controls = mergeSpendingControls({ ...emptySpendingControls(), ...card.spending_controls }, body.spending_controls)
    if (body.spending_controls !== undefined) assertSpendControlsSupported(controls, processor.spendControls)
    const metadata = body.metadata === undefined ? card.metadata : mergeMetadata(card.metadata, body.metadata)
    const row = await repo.updateCard(trx, card.id, {
      spending_controls: json(controls),
      metadata: json(metadata),
      updated_at: now,
    })
    return presentCard(row)
  })
}
