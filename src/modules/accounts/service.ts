import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned, requireOwnedOnClock } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { BoundedCache } from '../../lib/bounded-cache.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock, wallTime } from '../../lib/object-clock.js'
import { callProcessor, recordOutcome } from '../../processors/calls.js'
import { assertKycForProgram } from '../kyc/index.js'
import { emit } from '../events/index.js'
import { moduleState } from '../module.js'
import {
  countCallerPrograms,
  findProgram,
  findPrograms,
  requireCallerProgram,
} from '../programs/index.js'
import { enqueueProvisioning, PROVISION_JOB } from './provision.js'
import { presentAccount, type AccountView } from './present.js'
import * as repo from './repo.js'
import type { AccountBlockRequest, AccountCreateRequest, AccountListQuery } from './schemas.js'

export type { AccountRow } from './repo.js'
export { presentAccount, type AccountView } from './present.js'
export { listAccountCards } from './cards-hook.js'
export { PROVISION_JOB }

type CreateBody = Static<typeof AccountCreateRequest>
type ListQuery = Static<typeof AccountListQuery>
type StatusBody = Static<typeof AccountBlockRequest>

/** The caller's account by id, for every module: another organization's id answers like a missing one. */
export async function requireAccount(
  db: Db,
  ctx: Scope,
  accountId: string,
  param?: string,
): Promise<repo.AccountRow> {
  const row = isId('acct', accountId) ? await repo.findAccount(db, accountId) : undefined
  return requireOwned(row, ctx, 'account_not_found', param)
}

/**
 * `requireAccount` with the dependencies the account moves on: under a sandbox clock (its cardholder is on one),
 * `deps.clock` reads the clock's time and `clockId` names it; otherwise `deps` itself. The clock is read with the
 * account, in its statement, and only in the sandbox (production has no clock).
 */
export async function requireAccountOnClock(
  deps: AppDeps,
  ctx: Scope,
  accountId: string,
): Promise<{ account: repo.AccountRow; deps: AppDeps; clockId: string | null }> {
  if (ctx.environment !== 'sandbox')
    return { account: await requireAccount(deps.db, ctx, accountId), deps, clockId: null }
  const found = isId('acct', accountId)
    ? await repo.findAccountWithClock(deps.db, accountId)
    : undefined
  const { row: account, ...on } = await requireOwnedOnClock(deps, found, ctx, 'account_not_found')
  return { account, ...on }
}

/**
 * An account's organization, environment and program never change: the mount decision's account half is cached
 * for good (bounded in size). A program's capabilities change only when the operator changes the program, and the
 * interface lets mounted operations change without notice: they are cached a few seconds per program, so a busy
 * process reads each program about once in that time, however many accounts are credited.
 */
const CAPABILITIES_CACHE_MS = 5_000

/** Who an account belongs to and its program, as capability mounting read it (none of it ever changes). */
type AccountMount = Pick<repo.AccountRow, 'organization_id' | 'environment' | 'program_id'>

/** A program's capabilities (null: no such program), read once per `CAPABILITIES_CACHE_MS` by all who miss it. */
interface ProgramCapabilities {
  capabilities: Promise<string[] | null>
  until: number
}

/** Capability mounting's per-process caches: accounts for good, programs' capabilities for a few seconds. */
export const ACCOUNT_MOUNTS = moduleState('accounts.mounts', () => ({
  accounts: new BoundedCache<string, AccountMount>(50_000),
  programs: new BoundedCache<string, ProgramCapabilities>(1_000),
}))

/**
 * The program behind an account in the path, for capability mounting. Null when the account is not the
 * caller's (in this environment), so the handler answers its own not-found or environment error instead.
 */
export async function accountProgramOf(
  deps: AppDeps,
  ctx: RequestCtx | undefined,
  accountId: string | undefined,
): Promise<{ capabilities: string[] } | null> {
  if (!ctx || !accountId || !isId('acct', accountId)) return null
  const mounts = deps.state.of(ACCOUNT_MOUNTS)
  let mount = mounts.accounts.get(accountId)
  if (!mount) {
    const account = await repo.findAccount(deps.db, accountId)
    if (!account) return null
    const { organization_id, environment, program_id } = account
    mount = { organization_id, environment, program_id }
    mounts.accounts.set(accountId, mount)
  }
  if (mount.organization_id !== ctx.organizationId || mount.environment !== ctx.environment)
    return null
  const now = Date.now()
  const cache = mounts.programs
  let program = cache.get(mount.program_id)
  if (!program || program.until < now) {
    // One read per program however many requests miss at once: they wait for the same answer.
    const capabilities = findProgram(deps.db, mount.program_id).then(
      (row) => row?.capabilities ?? null,
    )
    program = { capabilities, until: now + CAPABILITIES_CACHE_MS }
    cache.set(mount.program_id, program)
    program.capabilities.catch(() => cache.delete(mount!.program_id))
  }
  const capabilities = await program.capabilities
  return capabilities ? { capabilities } : null
}

/**
 * Opens an account: the program must be the caller's and hold the currency, the cardholder must pass the
 * program's KYC gate; then the processor opens it (outside any transaction). Only when the processor
 * answered is the account written, with its events (and, for asynchronous processors, the job that
 * waits for the upstream account).
 */
export async function createAccount(
  deps: AppDeps,
  ctx: RequestCtx,
  body: CreateBody,
): Promise<AccountView> {
  if ((await countCallerPrograms(deps.db, ctx)) === 0) {
    throw new ApiError('program_not_provisioned', {
      message: `Your organization has no program in ${ctx.environment}.`,
    })
  }
  const program = await requireCallerProgram(deps.db, ctx, body.program_id, 'program_id')
  const processor = deps.processors.forProgram(program)
  const currency = body.currency.toUpperCase()
  if (!program.currencies.includes(currency)) {
    throw new ApiError('invalid_parameter', {
      param: 'currency',
      message: `Program ${program.id} holds only: ${program.currencies.join(', ')}.`,
    })
  }
  const cardholder = await assertKycForProgram(
    deps.db,
    ctx,
    deps.clock.now(),
    body.cardholder_id,
    program,
    'cardholder_id',
  )
  // A cardholder on a sandbox clock: the account is made on the clock's time (docs/sandbox-clocks.md).
  const clockId = cardholder.clock_id ?? null
  const clocked = await onClock(deps, clockId)

  const accountId = newId('acct')
  const call = await callProcessor(
    deps,
    ctx,
    { processor: processor.name, operation: 'create_account', subjectId: accountId },
    () =>
      processor.createAccount(ctx, {
        accountId,
        programId: program.id,
        cardholderId: body.cardholder_id,
        currency,
      }),
  )
  const upstream = call.result.upstreamReference
  const now = clocked.clock.now()
  return withTx(deps.db, async (trx) => {
    const row = await repo.insertAccount(trx, {
      id: accountId,
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      program_id: program.id,
      cardholder_id: body.cardholder_id,
      currency,
      upstream_reference: upstream,
      metadata: body.metadata ?? {},
      now,
    })
    await recordOutcome(
      trx,
      call.operationId,
      upstream ? 'succeeded' : 'accepted',
      deps.clock.now(),
    )
    const view = presentAccount(row)
    const scope = { ...ctx, clockId }
    await emit(trx, scope, 'account.created', view, now)
    if (upstream) await emit(trx, scope, 'account.provisioned', view, now)
    // The processor's work waits its delay on wall time, also under a clock.
    else await enqueueProvisioning(trx, deps, row, wallTime(clockId, now), clockId)
    return view
  })
}

export async function retrieveAccount(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
): Promise<AccountView> {
  return presentAccount(await requireAccount(deps.db, ctx, accountId))
}

export async function listAccounts(
  deps: AppDeps,
  ctx: RequestCtx,
  query: ListQuery,
): Promise<ListResult<AccountView>> {
  const filter: repo.AccountFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    cardholderId: query.cardholder_id,
    programId: query.program_id,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/accounts',
    page: query as PageParams,
    sortKey: (r: repo.AccountRow) => r.id,
    fetch: (bounds) => repo.listAccounts(deps.db, filter, bounds),
    present: presentAccount,
  })
}

/**
 * Blocks or unblocks. Balances and holds are untouched (holds still release and capture). Asking for
 * the status the account already has answers the account unchanged, without an event. The processor is
 * told first (outside any transaction); when it fails, the 502 leaves the account as it was.
 */
export async function setAccountStatus(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  to: 'open' | 'blocked',
  body: StatusBody | undefined,
): Promise<AccountView> {
  // Under a sandbox clock the account's times are the clock's and its event names the clock (docs/sandbox-clocks.md).
  const {
    account: current,
    deps: clocked,
    clockId,
  } = await requireAccountOnClock(deps, ctx, accountId)
  const from = to === 'blocked' ? 'open' : 'blocked'
  if (current.status === to) return presentAccount(current)
  const program = await findProgram(deps.db, current.program_id)
  if (!program)
    throw new ApiError('program_not_provisioned', {
      message: `Program ${current.program_id} is no longer available.`,
    })
  const processor = deps.processors.forProgram(program)
  const call = await callProcessor(
    deps,
    ctx,
    { processor: processor.name, operation: 'set_account_status', subjectId: current.id },
    () => processor.setAccountStatus(ctx, current.id, to),
  )
  const now = clocked.clock.now()
  return withTx(deps.db, async (trx) => {
    await recordOutcome(trx, call.operationId, 'succeeded', deps.clock.now())
    const reason = to === 'blocked' ? (body?.reason ?? null) : null
    const note = to === 'blocked' ? (body?.note ?? null) : null
    const row = await repo.setStatus(trx, current.id, from, to, reason, note, now)
    if (!row) return presentAccount((await repo.findAccount(trx, current.id))!)
    const view = presentAccount(row)
    const type = to === 'blocked' ? 'account.blocked' : 'account.unblocked'
    await emit(trx, { ...ctx, clockId }, type, view, now)
    return view
  })
}

/** The address-change rule for cardholders: refused by PATCH once they hold an account on such a program. */
export async function cardholderAddressNeedsKyc(
  deps: AppDeps,
  cardholder: { id: string; organization_id: string; environment: string },
): Promise<boolean> {
  const programIds = await repo.cardholderProgramIds(deps.db, cardholder)
  return (await findPrograms(deps.db, programIds)).some((p) => p.address_change_requires_kyc)
}
