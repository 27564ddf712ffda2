import { answer } from '../../lib/slots.js'
import type { ServiceModule } from '../module.js'
import { DISPUTED_TOTAL } from '../transactions/index.js'
import { registerDisputes } from './routes.js'
import { DISPUTE_REVIEW_JOB, disputedTotal, runReviewJob } from './service.js'
import { DELETE_DISPUTES_OF } from '../clocks/index.js'
import { deleteDisputesOf } from './clock-deletion.js'

/** Disputes; `dispute.review` moves a submitted one under review; refunds ask it what disputes claim of a capture. */
export const disputesModule: ServiceModule = {
  name: 'disputes',
  routes: registerDisputes,
  jobs: { [DISPUTE_REVIEW_JOB]: runReviewJob },
  hooks: [answer(DELETE_DISPUTES_OF, deleteDisputesOf), answer(DISPUTED_TOTAL, disputedTotal)],
}
