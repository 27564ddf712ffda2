import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import type { Clock } from '../lib/clock.js'
import './table.js'
import {
  EsimNetworkTimeout,
  type EsimNetwork,
  type NetworkOrderStatus,
  type ProfileRequest,
  type ProvisionOutcome,
  type ProvisionRequest,
} from './port.js'

/** A provisioning round trip of a real SM-DP+ and operator takes a few hundred milliseconds. */
export const DEFAULT_PROVISIONING_LATENCY_MS = 300

export type SimOutcome = 'success' | 'timeout' | 'failure'
export type SimSettlement = 'completed' | 'failed'

/** What an organization told its sandbox network: the next call's outcome (used once) and its latency (kept). */
export interface SimDirective {
  next_outcome: SimOutcome | null
  settles_as: SimSettlement | null
  latency_ms: number | null
}

interface Scope {
  organizationId: string
  environment: string
}

/** Stores an organization's instructions; fields left out keep their current value. */
export async function setSimDirective(
  db: Db,
  scope: Scope,
  patch: Partial<SimDirective>,
  now: Date,
): Promise<SimDirective> {
  const current = await getSimDirective(db, scope)
  const next: SimDirective = {
    next_outcome: patch.next_outcome !== undefined ? patch.next_outcome : current.next_outcome,
    settles_as:
      patch.settles_as !== undefined
        ? patch.settles_as
        : patch.next_outcome !== undefined
          ? null
          : current.settles_as,
    latency_ms: patch.latency_ms !== undefined ? patch.latency_ms : current.latency_ms,
  }
  await sql`INSERT INTO esim_sim_directives (organization_id, environment, next_outcome, settles_as, latency_ms, updated_at)
    VALUES (${scope.organizationId}, ${scope.environment}, ${next.next_outcome}, ${next.settles_as}, ${next.latency_ms}, ${now})
    ON CONFLICT (organization_id, environment) DO UPDATE SET next_outcome = EXCLUDED.next_outcome, settles_as = EXCLUDED.settles_as,
      latency_ms = EXCLUDED.latency_ms, updated_at = EXCLUDED.updated_at`.execute(db)
  return next
}

export async function getSimDirective(db: Db, scope: Scope): Promise<SimDirective> {
  const row = await db
    .selectFrom('esim_sim_directives')
    .select(['next_outcome', 'settles_as', 'latency_ms'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst()
  return {
    next_outcome: (row?.next_outcome ?? null) as SimOutcome | null,
    settles_as: (row?.settles_as ?? null) as SimSettlement | null,
    latency_ms: row?.latency_ms ?? null,
  }
}

/**
 * The sandbox provisioning network: succeeds after a realistic latency unless the calling organization
 * asked for a timeout or a failure. It keeps its own record of what it did to each order, which is what
 * settlement asks about later, so several service nodes share one simulated network.
 */
export class SimulatedEsimNetwork implements EsimNetwork {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly defaultLatencyMs = DEFAULT_PROVISIONING_LATENCY_MS,
  ) {}

  onDatabase(db: Db): EsimNetwork {
    return db === this.db ? this : new SimulatedEsimNetwork(db, this.clock, this.defaultLatencyMs)
  }

  async provision(request: ProvisionRequest): Promise<ProvisionOutcome> {
    // One statement: take the organization's one-shot instruction if there is one (only one call can), decide
    // the outcome, and write it to the network's record before the latency elapses, as a real network commits
    // to an outcome before its answer reaches us.
    const { rows } = await sql<{ latency_ms: number | null; outcome: string }>`
      WITH taken AS (
        UPDATE esim_sim_directives d SET next_outcome = NULL, settles_as = NULL
        FROM (SELECT next_outcome, settles_as FROM esim_sim_directives
              WHERE organization_id = ${request.organizationId} AND environment = ${request.environment} AND next_outcome IS NOT NULL FOR UPDATE) old
        WHERE d.organization_id = ${request.organizationId} AND d.environment = ${request.environment}
        RETURNING old.next_outcome, old.settles_as
      ), decided AS (
        SELECT COALESCE((SELECT next_outcome FROM taken), 'success') AS outcome, COALESCE((SELECT settles_as FROM taken), 'completed') AS settles_as
      ), logged AS (
        INSERT INTO esim_sim_network_log (order_id, iccid, outcome, created_at)
        SELECT ${request.orderId}, ${request.iccid},
          CASE WHEN outcome = 'failure' OR (outcome = 'timeout' AND settles_as = 'failed') THEN 'failed' ELSE 'provisioned' END, ${this.clock.now()}
        FROM decided
        ON CONFLICT (order_id) DO NOTHING
        RETURNING outcome
      )
      SELECT (SELECT latency_ms FROM esim_sim_directives WHERE organization_id = ${request.organizationId} AND environment = ${request.environment}) AS latency_ms,
        decided.outcome
      FROM decided`.execute(this.db)
    const { latency_ms: latencyMs, outcome } = rows[0]
    const latency = latencyMs ?? this.defaultLatencyMs
    if (latency > 0) await sleep(Math.round(latency * (0.9 + Math.random() * 0.2)))
    if (outcome === 'failure')
      return {
        status: 'failed',
        reason: 'The network refused to provision the profile (simulated failure).',
      }
    if (outcome === 'timeout') throw new EsimNetworkTimeout()
    return { status: 'provisioned' }
  }

  /** The sandbox network bars and lets profiles back at once: the service records the status. */
  async suspend(_request: ProfileRequest): Promise<void> {}

  async resume(_request: ProfileRequest): Promise<void> {}

  async orderStatus(orderId: string): Promise<NetworkOrderStatus> {
    const row = await this.db
      .selectFrom('esim_sim_network_log')
      .select('outcome')
      .where('order_id', '=', orderId)
      .executeTakeFirst()
    return row ? (row.outcome as NetworkOrderStatus) : 'unknown'
  }
}
