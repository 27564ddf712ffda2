import type { ColumnType, Generated, Kysely } from 'kysely'

/** A timestamp column: read as Date, written as Date. */
export type Timestamp = Date
/** A jsonb column: read parsed, written as JSON text (see `json()`). */
export type Json<T> = ColumnType<T, string, string>

export interface OrganizationsTable {
  id: string
  name: string
  created_at: Generated<Timestamp>
}

export interface ProgramsTable {
  id: string
  organization_id: string
  environment: string
  name: string
  processor: string
  currencies: Json<string[]>
  form_factors: Json<string[]>
  card_types: Json<string[]>
  card_brand: string
  capabilities: Json<string[]>
  kyc_initial_status: string
  one_card_per_cardholder: boolean
  identity_evidence_required: boolean
  address_change_requires_kyc: boolean
  bin: string
  pin_key_configured: boolean
  /** Whether its cards may spend in another currency than their account's (migration 0091). */
  foreign_spend: Generated<'allowed' | 'blocked'>
  /** The markup on a converted amount, in basis points (0–1000). */
  fx_markup_bps: Generated<number>
  /** The markup inside the converted amount (`included`) or as its own ledger entry (`separate`). */
  fx_fee: Generated<'included' | 'separate'>
  created_at: Generated<Timestamp>
  updated_at: Generated<Timestamp>
}

export interface OauthClientsTable {
  id: string
  organization_id: string
  environment: string
  label: string
  scopes: Json<string[]>
  jwks: Json<{ keys: Record<string, unknown>[] }>
  ip_allowlist: Json<string[]> | null
  status: string
  created_at: Generated<Timestamp>
  updated_at: Generated<Timestamp>
  revoked_at: Timestamp | null
}

export interface OauthJtisTable {
  client_id: string
  jti: string
  expires_at: Timestamp
}

export interface AccessTokensTable {
  token_hash: string
  client_id: string
  organization_id: string
  environment: string
  scopes: Json<string[]>
  expires_at: Timestamp
  created_at: Generated<Timestamp>
}

export interface NetworkPoliciesTable {
  organization_id: string
  environment: string
  ip_allowlist: Json<string[]>
  updated_at: Generated<Timestamp>
}

export interface IdempotencyKeysTable {
  organization_id: string
  environment: string
  key: string
  method: string
  path: string
  request_hash: string
  response_status: number
  /** The answer, encrypted (it can hold a secret shown once). */
  response_body: string | null
  /** The answer as a batched statement wrote it (no secrets): used when `response_body` is null. */
  response_json: unknown
  created_at: Timestamp
}

/**
 * The whole schema. Modules add their tables by augmenting this interface
 * (`declare module '../../db/types.js' { interface Database { … } }`), so no module edits another's file.
 */
export interface Database {
  organizations: OrganizationsTable
  programs: ProgramsTable
  oauth_clients: OauthClientsTable
  oauth_jtis: OauthJtisTable
  access_tokens: AccessTokensTable
  network_policies: NetworkPoliciesTable
  idempotency_keys: IdempotencyKeysTable
}

/** A database handle or an open transaction: repos take either, services decide which. */
export type Db = Kysely<Database>

/** Serializes a value for a jsonb column (pg would otherwise send JS arrays as Postgres arrays). */
export function json<T>(value: T): string {
  return JSON.stringify(value)
}
