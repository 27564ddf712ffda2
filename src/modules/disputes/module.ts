import { answer } from '../../lib/slots.js'
import type { ServiceModule } from '../module.js'
import { DISPUTED_TOTAL } from '../transactions/index.js'
import { registerDisputes } from './routes.js'
import { DISPUTE_REVIEW_JOB, disputedTotal, runReviewJob } from './service.js'

/** Disputes; `dispute.review` moves a submitted one under review; refunds ask it what disputes claim of a capture. */
export const disputesModule: ServiceModule = {
  name: 'disputes',
  routes: registerDisputes,
  jobs: { [DISPUTE_REVIEW_JOB]: runReviewJob },
  hooks: [answer(DISPUTED_TOTAL, disputedTotal)],
}
