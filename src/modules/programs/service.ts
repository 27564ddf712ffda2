import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { knownCurrency } from '../../lib/currencies.js'
import { FX_MAX_MARKUP_BPS } from '../../lib/fx.js'
import { newId } from '../../lib/ids.js'
import { json } from '../../db/types.js'
import * as repo from './repo.js'
import type { Program } from './schemas.js'

export type ProgramView = Static<typeof Program>
export type { ProgramRow } from './repo.js'

export function presentProgram(row: repo.ProgramRow): ProgramView {
  return {
    id: row.id,
    object: 'program',
    name: row.name,
    processor: row.processor,
    environment: row.environment as ProgramView['environment'],
    currencies: row.currencies,
    form_factors: row.form_factors,
    card_types: row.card_types,
    card_brand: row.card_brand,
    capabilities: row.capabilities,
    kyc_initial_status: row.kyc_initial_status,
    one_card_per_cardholder: row.one_card_per_cardholder,
    identity_evidence_required: row.identity_evidence_required,
    address_change_requires_kyc: row.address_change_requires_kyc,
    foreign_spend: row.foreign_spend,
    fx_markup_bps: row.fx_markup_bps,
    fx_fee: row.fx_fee,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}

export async function listPrograms(
  deps: AppDeps,
  ctx: RequestCtx,
  page: PageParams,
): Promise<ListResult<ProgramView>> {
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/programs',
    page,
    sortKey: (r: repo.ProgramRow) => r.id,
    fetch: (bounds) => repo.listPrograms(deps.db, ctx.organizationId, ctx.environment, bounds),
    present: presentProgram,
  })
}

/**
 * The caller's program by id, for other modules. Whether it does not exist or belongs to someone else,
 * the answer is the same `invalid_parameter` on `param` (the interface's rule for program_id).
 */
export async function requireCallerProgram(
  db: Db,
  ctx: Scope,
  programId: string,
  param = 'program_id',
): Promise<repo.ProgramRow> {
  const row = await repo.findProgram(db, programId)
  if (!row || row.organization_id !== ctx.organizationId || row.environment !== ctx.environment) {
    if (row && row.organization_id === ctx.organizationId) {
      throw new ApiError('environment_mismatch', {
        param,
        message: `${programId} belongs to the ${row.environment} environment.`,
      })
    }
    throw new ApiError('invalid_parameter', {
      param,
      message: `${param} is not one of your programs.`,
    })
  }
  return row
}

export async function findProgram(db: Db, id: string): Promise<repo.ProgramRow | undefined> {
  return repo.findProgram(db, id)
}

/** The programs of these ids that exist, for other modules (one read for many). */
export async function findPrograms(db: Db, ids: readonly string[]): Promise<repo.ProgramRow[]> {
  return repo.findPrograms(db, [...new Set(ids)])
}

/** A page of one organization's programs (both environments), oldest first: the operator's list. */
export async function listOrganizationPrograms(
  deps: AppDeps,
  organizationId: string,
  page: PageParams,
): Promise<ListResult<ProgramView>> {
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url: '/operator/v1/programs',
    page,
    sortKey: (r: repo.ProgramRow) => r.id,
    fetch: (bounds) => repo.listOrganizationPrograms(deps.db, organizationId, bounds),
    present: presentProgram,
  })
}

/** What the operator's console filters the platform's programs by (each optional). */
export interface ProgramFilter {
  organizationId?: string
  environment?: string
}

/** A page of the platform's programs, any organization, oldest first, narrowed by `filter` (the operator's console). */
export async function listPlatformPrograms(
  deps: AppDeps,
  filter: ProgramFilter,
  page: PageParams,
): Promise<ListResult<repo.ProgramRow>> {
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url: '/console/operator/programs',
    page,
    sortKey: (r: repo.ProgramRow) => r.id,
    fetch: (bounds) => repo.listPlatformPrograms(deps.db, filter, bounds),
    present: (r) => r,
  })
}

export async function countCallerPrograms(db: Db, scope: Scope): Promise<number> {
  return repo.countPrograms(db, scope.organizationId, scope.environment)
}

/** A program's foreign-exchange settings, as the operator sets them (each optional; defaults: allowed, 0, included). */
export interface ProgramFxSettings {
  foreign_spend?: 'allowed' | 'blocked'
  fx_markup_bps?: number
  fx_fee?: 'included' | 'separate'
}

export interface ProgramCreateInput extends ProgramFxSettings {
  organization_id: string
  environment: string
  name: string
  processor: string
  currencies: string[]
  form_factors?: string[]
  card_types?: string[]
  card_brand?: string
  bin?: string
  kyc_initial_status?: string
  pin_key_configured?: boolean
}

/** What the operator may change on a program: its name and its foreign-exchange settings. */
export interface ProgramUpdateInput extends ProgramFxSettings {
  name?: string
}

const FOREIGN_SPEND = ['allowed', 'blocked']
const FX_FEE = ['included', 'separate']

/**
 * The settings' rules, for callers the HTTP schemas do not guard (the console): a markup is an integer 0–1000, the
 * two choices one of theirs. `400 invalid_parameter` naming the setting.
 */
function checkFxSettings(input: ProgramFxSettings): void {
  if (input.foreign_spend !== undefined && !FOREIGN_SPEND.includes(input.foreign_spend)) {
    throw new ApiError('invalid_parameter', {
      param: 'foreign_spend',
      message: 'foreign_spend must be one of: allowed, blocked.',
    })
  }
  const bps = input.fx_markup_bps
  if (bps !== undefined && (!Number.isInteger(bps) || bps < 0 || bps > FX_MAX_MARKUP_BPS)) {
    throw new ApiError('invalid_parameter', {
      param: 'fx_markup_bps',
      message: `fx_markup_bps must be an integer from 0 to ${FX_MAX_MARKUP_BPS} (basis points).`,
    })
  }
  if (input.fx_fee !== undefined && !FX_FEE.includes(input.fx_fee)) {
    throw new ApiError('invalid_parameter', {
      param: 'fx_fee',
      message: 'fx_fee must be one of: included, separate.',
    })
  }
}

/** The currencies upper-cased and without repeats; one the service does not know is `invalid_parameter` naming it. */
function knownCurrencies(currencies: readonly string[]): string[] {
  currencies.forEach((code, i) => {
    if (!knownCurrency(code.toUpperCase())) {
      throw new ApiError('invalid_parameter', {
        param: `currencies[${i}]`,
        message: `${code} is not an ISO 4217 currency the service knows.`,
      })
    }
  })
  return [...new Set(currencies.map((c) => c.toUpperCase()))]
}

/**
 * Operator only: a program inherits its processor's capabilities and traits; form factors may narrow them.
 * `inSameTx`: the caller's work in the creation's transaction (the console's audit row).
 */
export async function createProgram(
  deps: AppDeps,
  input: ProgramCreateInput,
  inSameTx?: InSameTx<repo.ProgramRow>,
): Promise<repo.ProgramRow> {
  const profile = deps.processors.profile(input.processor)
  if (!profile)
    throw new ApiError('invalid_parameter', {
      param: 'processor',
      message: `processor must be one of: ${deps.processors.names().join(', ')}.`,
    })
  const formFactors = input.form_factors ?? profile.formFactors
  const unsupported = formFactors.filter((f) => !profile.formFactors.includes(f))
  if (unsupported.length > 0) {
    throw new ApiError('invalid_parameter', {
      param: 'form_factors',
      message: `${input.processor} issues only: ${profile.formFactors.join(', ')}.`,
    })
  }
  const currencies = knownCurrencies(input.currencies)
  checkFxSettings(input)
  return withTx(deps.db, async (trx) => {
    const row = await repo.insertProgram(trx, {
      id: newId('prog'),
      organization_id: input.organization_id,
      environment: input.environment,
      name: input.name,
      processor: profile.name,
      currencies: json(currencies),
      form_factors: json(formFactors),
      card_types: json(input.card_types ?? profile.cardTypes),
      card_brand: input.card_brand ?? profile.cardBrand,
      capabilities: json(profile.capabilities),
      kyc_initial_status: input.kyc_initial_status ?? profile.kycInitialStatus,
      one_card_per_cardholder: profile.oneCardPerCardholder,
      identity_evidence_required: profile.identityEvidenceRequired,
      address_change_requires_kyc: profile.addressChangeRequiresKyc,
      bin: input.bin ?? profile.bin,
      pin_key_configured: input.pin_key_configured ?? true,
      foreign_spend: input.foreign_spend ?? 'allowed',
      fx_markup_bps: input.fx_markup_bps ?? 0,
      fx_fee: input.fx_fee ?? 'included',
    })
    await inSameTx?.(trx, row)
    return row
  })
}

/** A program by id for the operator; `program_not_found` when there is none. */
export async function getProgram(deps: AppDeps, id: string): Promise<repo.ProgramRow> {
  const row = await repo.findProgram(deps.db, id)
  if (!row) throw new ApiError('program_not_found')
  return row
}

/**
 * Operator only: changes a program's name or foreign-exchange settings (fields left out stay as they are). What its
 * processor gives it (capabilities, form factors, traits) and its currencies do not change here. `inSameTx`: the
 * caller's work in the change's transaction (the console's audit row).
 */
export async function updateProgram(
  deps: AppDeps,
  id: string,
  input: ProgramUpdateInput,
  inSameTx?: InSameTx<repo.ProgramRow>,
): Promise<repo.ProgramRow> {
  checkFxSettings(input)
  if (input.name !== undefined && (input.name.trim() === '' || input.name.length > 200)) {
    throw new ApiError('invalid_parameter', {
      param: 'name',
      message: 'name must be 1 to 200 characters.',
    })
  }
  const changes = Object.fromEntries(
    Object.entries({
      name: input.name,
      foreign_spend: input.foreign_spend,
      fx_markup_bps: input.fx_markup_bps,
      fx_fee: input.fx_fee,
    }).filter(([, value]) => value !== undefined),
  )
  return withTx(deps.db, async (trx) => {
    const row =
      Object.keys(changes).length === 0
        ? await repo.findProgram(trx, id)
        : await repo.updateProgram(trx, id, { ...changes, updated_at: deps.clock.now() })
    if (!row) throw new ApiError('program_not_found')
    await inSameTx?.(trx, row)
    return row
  })
}
