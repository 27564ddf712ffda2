/** What the events module publishes to other modules: they import it only through this file. */
export {
  barePrefixRefusals,
  deliveredToNamedEndpoint,
  EVENT_CATALOGUE,
  EVENT_CATALOGUE_PATH,
  EVENT_OBJECTS,
  EVENT_PREFIXES,
  EVENT_TYPES,
  EVENT_WILDCARDS,
  eventPrefix,
  eventScope,
  isEventType,
  readableTypes,
  readsType,
  SUBSCRIPTION_FORMS,
  subscribes,
  subscriptionRefusal,
  subscriptionRefusalTemplate,
  typesOfForm,
} from './catalog.js'
export type {
  EventObject,
  EventObjectSpec,
  EventType,
  EventTypeSpec,
  ReadableTypes,
} from './catalog.js'
export { EVENT_API_VERSION, EVENT_ROW_COLUMNS, emit, emitPerRow } from './emit.js'
export type { EventDetails, EventScope } from './emit.js'
export { DELIVERY_JOB, queueDeliveries } from './outbox.js'
export { eventIdsSince, eventsAbout, findEvent, withDeliveryEvents } from './repo.js'
export type { DeliveryEventFields } from './repo.js'
export {
  EVENT_RETENTION_MS,
  findEventForReplay,
  getEvent,
  listEvents,
  presentEvent,
  requireReadableEvent,
  requireReadableForms,
  retentionStart,
} from './service.js'
export type { EventListParams } from './service.js'
export type { EventRow, EventView } from './service.js'
export { Event, EventParams } from './schemas.js'
export { eventsWithIdPrefix } from './search.js'
