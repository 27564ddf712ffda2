import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import { enqueue, type JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { onClock } from '../../lib/object-clock.js'
import { emit } from '../events/index.js'
import { findProgram } from '../programs/index.js'
import { presentAccount } from './present.js'
import * as repo from './repo.js'

/** The job that waits for a processor's asynchronous account creation, then records it. */
export const PROVISION_JOB = 'account.provision' satisfies JobType

/** Never poll faster than this, even when the sandbox delay is 0. */
const MIN_POLL_MS = 250

/** Queued with the account (same transaction): looks for the upstream account after the processor's delay. */
export async function enqueueProvisioning(
  trx: Db,
  deps: AppDeps,
  row: repo.AccountRow,
  now: Date,
  clockId: string | null = null,
): Promise<void> {
  await enqueue(trx, {
    type: PROVISION_JOB,
    // The account's sandbox clock, which its `account.provisioned` names (and whose time it reads).
    payload: clockId ? { account_id: row.id, clock_id: clockId } : { account_id: row.id },
    runAt: new Date(now.getTime() + deps.config.cardIssueDelayMs),
    ...scopeOfRow(row),
  })
}

/**
 * Asks the processor whether the account exists yet. When it does: stores the reference and emits
 * `account.provisioned` in one transaction; when it does not, looks again later. Processor failures
 * throw, and the runner retries with backoff.
 */
export async function provisionAccount(
  deps: AppDeps,
  accountId: string,
  clockId: string | null = null,
): Promise<void | { retryAt: Date }> {
  const row = await repo.findAccount(deps.db, accountId)
  if (!row || row.upstream_reference !== null) return
  const program = await findProgram(deps.db, row.program_id)
  if (!program) return
  const scope = scopeOfRow(row)
  const upstream = await deps.processors.forProgram(program).getAccount(scope, row.id)
  const now = deps.clock.now()
  if (upstream.upstreamReference === null) {
    return {
      retryAt: new Date(now.getTime() + Math.max(MIN_POLL_MS, deps.config.cardIssueDelayMs)),
    }
  }
  const reference = upstream.upstreamReference
  const clocked = await onClock(deps, clockId)
  const at = clocked.clock.now()
  await withTx(deps.db, async (trx) => {
    const updated = await repo.setUpstreamReference(trx, row.id, reference, at)
    if (updated)
      await emit(trx, { ...scope, clockId }, 'account.provisioned', presentAccount(updated), at)
  })
}

/** `account.provision` jobs. */
export function runProvisionJob(deps: AppDeps, job: JobRecord): Promise<void | { retryAt: Date }> {
  return provisionAccount(
    deps,
    String(job.payload.account_id),
    (job.payload.clock_id as string | undefined) ?? null,
  )
}
