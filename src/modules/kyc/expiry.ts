import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import type { JobRecord, JobOutcome } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { emit } from '../events/index.js'
import { claimKycExpiry, presentCardholder, findCardholderForJob } from '../cardholders/index.js'

/**
 * kyc_status is computed on read (`expired` as soon as expires_at passes); this job, queued for expires_at,
 * only announces the change with `cardholder.kyc_updated`, once per attestation, if it is still the current one.
 * Under a sandbox clock it is queued on the clock and runs in its advance, `deps.clock` reading expires_at.
 */
export const KYC_EXPIRY_JOB = 'kyc.expiry' satisfies JobType

export async function runKycExpiry(deps: AppDeps, job: JobRecord): Promise<JobOutcome> {
  const cardholderId = String(job.payload.cardholder_id)
  const attestationId = String(job.payload.attestation_id)
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const claimed = await claimKycExpiry(trx, cardholderId, attestationId, now)
    if (claimed) {
      await emit(
        trx,
        { ...scopeOfRow(claimed), clockId: claimed.clock_id },
        'cardholder.kyc_updated',
        presentCardholder(claimed, now),
        now,
      )
      return
    }
    // Picked up early (clocks differ between nodes): try again when the attestation actually expires.
    const row = await findCardholderForJob(trx, cardholderId)
    if (
      row &&
      row.kyc_attestation_id === attestationId &&
      !row.kyc_expiry_notified &&
      row.kyc_expires_at &&
      row.kyc_expires_at.getTime() > now.getTime()
    ) {
      return { retryAt: row.kyc_expires_at }
    }
  })
}
