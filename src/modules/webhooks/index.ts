/** What the webhooks module publishes to other modules: they import it only through this file. */
export { hasWebhookEndpoint } from './service.js'
export { webhookBacklog } from './health.js'
export type { WebhookBacklog } from './health.js'
