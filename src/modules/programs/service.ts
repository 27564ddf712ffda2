import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
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
    created_at: iso(row.created_at)!,
  }
}

export async function listPrograms(deps: AppDeps, ctx: RequestCtx, page: PageParams): Promise<ListResult<ProgramView>> {
  return paginate({
    ctx, cursors: deps.cursors, url: '/v1/programs', page,
    sortKey: (r: repo.ProgramRow) => r.id,
    fetch: (bounds) => repo.listPrograms(deps.db, ctx.organizationId, ctx.environment, bounds),
    present: presentProgram,
  })
}

/**
 * The caller's program by id, for other modules. Whether it does not exist or belongs to someone else,
 * the answer is the same `invalid_parameter` on `param` (the interface's rule for program_id).
 */
export async function requireCallerProgram(db: Db, ctx: Scope, programId: string, param = 'program_id'): Promise<repo.ProgramRow> {
  const row = await repo.findProgram(db, programId)
  if (!row || row.organization_id !== ctx.organizationId || row.environment !== ctx.environment) {
    if (row && row.organization_id === ctx.organizationId) {
      throw new ApiError('environment_mismatch', { param, message: `${programId} belongs to the ${row.environment} environment.` })
    }
    throw new ApiError('invalid_parameter', { param, message: `${param} is not one of your programs.` })
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
export async function listOrganizationPrograms(deps: AppDeps, organizationId: string, page: PageParams): Promise<ListResult<ProgramView>> {
  return paginate({
    ctx: OPERATOR_CTX, cursors: deps.cursors, url: '/operator/v1/programs', page,
    sortKey: (r: repo.ProgramRow) => r.id,
    fetch: (bounds) => repo.listOrganizationPrograms(deps.db, organizationId, bounds),
    present: presentProgram,
  })
}

/** What the operator's console filters the platform's programs by (each optional). */
export interface ProgramFilter { organizationId?: string; environment?: string }

/** A page of the platform's programs, any organization, oldest first, narrowed by `filter` (the operator's console). */
export async function listPlatformPrograms(deps: AppDeps, filter: ProgramFilter, page: PageParams): Promise<ListResult<repo.ProgramRow>> {
  return paginate({
    ctx: OPERATOR_CTX, cursors: deps.cursors, url: '/console/operator/programs', page,
    sortKey: (r: repo.ProgramRow) => r.id,
    fetch: (bounds) => repo.listPlatformPrograms(deps.db, filter, bounds),
    present: (r) => r,
  })
}

export async function countCallerPrograms(db: Db, scope: Scope): Promise<number> {
  return repo.countPrograms(db, scope.organizationId, scope.environment)
}

export interface ProgramCreateInput {
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

/**
 * Operator only: a program inherits its processor's capabilities and traits; form factors may narrow them.
 * `inSameTx`: the caller's work in the creation's transaction (the console's audit row).
 */
export async function createProgram(deps: AppDeps, input: ProgramCreateInput, inSameTx?: InSameTx<repo.ProgramRow>): Promise<repo.ProgramRow> {
  const profile = deps.processors.profile(input.processor)
  if (!profile) throw new ApiError('invalid_parameter', { param: 'processor', message: `processor must be one of: ${deps.processors.names().join(', ')}.` })
  const formFactors = input.form_factors ?? profile.formFactors
  const unsupported = formFactors.filter((f) => !profile.formFactors.includes(f))
  if (unsupported.length > 0) {
    throw new ApiError('invalid_parameter', { param: 'form_factors', message: `${input.processor} issues only: ${profile.formFactors.join(', ')}.` })
  }
  return withTx(deps.db, async (trx) => {
    const row = await repo.insertProgram(trx, {
      id: newId('prog'),
      organization_id: input.organization_id,
      environment: input.environment,
      name: input.name,
      processor: profile.name,
      currencies: json([...new Set(input.currencies.map((c) => c.toUpperCase()))]),
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
    })
    await inSameTx?.(trx, row)
    return row
  })
}
