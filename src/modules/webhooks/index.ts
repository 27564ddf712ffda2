/** What the webhooks module publishes to other modules: they import it only through this file. */
export {
  createEndpoint,
  deleteEndpoint,
  endpointUrl,
  getEndpoint,
  hasWebhookEndpoint,
  listEndpoints,
  MAX_ENDPOINTS_PER_ENVIRONMENT,
  rotateSecret,
  updateEndpoint,
} from './service.js'
export type { EndpointRow, EndpointView } from './service.js'
export { eventDeliveries, listEndpointDeliveries } from './delivery-log.js'
export type { DeliveryView } from './delivery-log.js'
export { replayOwnEndpoint, replayOwnEvent, sendTestEvent } from './replay.js'
export type { ReplayView } from './replay.js'
export { endpointHealth, webhookBacklog } from './health.js'
export type { EndpointHealth, WebhookBacklog } from './health.js'
// The authorization endpoint (authorizations module) is registered, signed and called like a webhook endpoint.
export { deliveryHeaders } from './delivery.js'
export { RESPONSE_READ_LIMIT, sendWebhook, type SendResult } from './sender.js'
export { newWebhookSecret, ROTATION_OVERLAP_MS, sealSecret, signingSecrets } from './secrets.js'
