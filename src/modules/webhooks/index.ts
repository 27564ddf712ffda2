/** What the webhooks module publishes to other modules: they import it only through this file. */
export { hasWebhookEndpoint } from './service.js'
export { webhookBacklog } from './health.js'
export type { WebhookBacklog } from './health.js'
// The authorization endpoint (authorizations module) is registered, signed and called like a webhook endpoint.
export { checkWebhookUrl, WebhookUrlRefused } from './url-policy.js'
export { deliveryHeaders } from './delivery.js'
export { sendWebhook, type SendResult } from './sender.js'
export { newWebhookSecret, ROTATION_OVERLAP_MS, sealSecret, signingSecrets } from './secrets.js'
