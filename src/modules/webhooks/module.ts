import type { ServiceModule } from '../module.js'
import { DELIVERIES, deliverWebhook } from './delivery.js'
import { DELIVERY_JOB } from '../events/index.js'
import { registerWebhooks } from './routes.js'

/** Webhook endpoints and the delivery of events to them (one `webhook.deliver` job per event and endpoint). */
export const webhooksModule: ServiceModule = {
  name: 'webhooks',
  routes: registerWebhooks,
  jobs: { [DELIVERY_JOB]: deliverWebhook },
  states: [DELIVERIES],
}
