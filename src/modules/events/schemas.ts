import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'

export const Event = Type.Object({
  id: Type.String({ description: 'evt_ id; unique per event, use it to deduplicate deliveries' }),
  object: Type.Literal('event'),
  type: Type.String({ description: 'What happened, e.g. cardholder.created' }),
  api_version: Type.String({ description: 'Date-form version that serialized data.object (2026-11-01)' }),
  environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
  created_at: Type.String({ format: 'date-time', description: 'When the event occurred, not when it was delivered' }),
  data: Type.Object({
    object: Type.Object({}, { additionalProperties: true, description: 'The full affected object in its REST shape at the time of the event' }),
  }),
}, { title: 'Event' })

const Bound = (description: string) => Type.Optional(Type.String({ maxLength: 40, description: `${description}: ISO 8601 timestamp or Unix seconds.` }))

export const EventListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only events of this type; `card.*` matches every card event.' })),
  'created[gte]': Bound('Created at or after'),
  'created[gt]': Bound('Created strictly after'),
  'created[lte]': Bound('Created at or before'),
  'created[lt]': Bound('Created strictly before'),
}, { additionalProperties: false })

export const EventParams = Type.Object({ event_id: Type.String({ maxLength: 200 }) })
