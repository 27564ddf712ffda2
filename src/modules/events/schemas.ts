import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import {
  EVENT_CATALOGUE,
  EVENT_CATALOGUE_PATH,
  EVENT_TYPES,
  EVENT_WILDCARDS,
  type EventDetailSpec,
  type EventTypeSpec,
} from './catalog.js'

/** Every detail field of the catalogue, with the types that carry it: one schema per name. */
function detailFields(): Record<string, ReturnType<typeof Type.Optional>> {
  const seen = new Map<string, { spec: EventDetailSpec; types: string[] }>()
  for (const type of EVENT_TYPES) {
    for (const [name, spec] of Object.entries(
      (EVENT_CATALOGUE[type] as EventTypeSpec).details ?? {},
    )) {
      const known = seen.get(name)
      if (known && known.spec.type !== spec.type)
        throw new Error(`the event detail ${name} has two types in the catalogue`)
      seen.set(name, { spec: known?.spec ?? spec, types: [...(known?.types ?? []), type] })
    }
  }
  return Object.fromEntries(
    [...seen].map(([name, { spec, types }]) => {
      const description = `${spec.description}. Only on ${types.join(', ')}.`
      const schema =
        spec.type === 'integer'
          ? Type.Integer({ description })
          : spec.type === 'string'
            ? Type.String({ description })
            : spec.type === 'string_array'
              ? Type.Array(Type.String(), { description })
              : Type.Union([Type.String(), Type.Null()], { description })
      return [name, Type.Optional(schema)]
    }),
  )
}

export const Event = Type.Object(
  {
    id: Type.String({ description: 'evt_ id; unique per event, use it to deduplicate deliveries' }),
    object: Type.Literal('event'),
    type: Type.Enum([...EVENT_TYPES], {
      type: 'string',
      description: `What happened, e.g. cardholder.created. Every type, what emits it and an example: the event catalogue (${EVENT_CATALOGUE_PATH}).`,
    }),
    api_version: Type.String({
      description: 'Date-form version that serialized data.object (2026-11-01)',
    }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
    created_at: Type.String({
      format: 'date-time',
      description: 'When the event occurred, not when it was delivered',
    }),
    clock_id: Type.Optional(
      Type.String({
        description:
          "Sandbox only: the clock (clk_…) its object is under; absent for objects without one. The event's " +
          "own created_at stays wall time; the object's times are the clock's (docs/sandbox-clocks.md).",
      }),
    ),
    data: Type.Object(
      {
        object: Type.Object(
          {},
          {
            additionalProperties: true,
            description: 'The full affected object in its REST shape at the time of the event',
          },
        ),
        ...detailFields(),
      },
      {
        description:
          'The object, and beside it what the event says of the change when its type has details (the event catalogue lists them per type)',
      },
    ),
  },
  {
    title: 'Event',
    examples: [
      {
        id: 'evt_01JD3R2B4C6D8E0F2G4H6J8K0M',
        object: 'event',
        type: 'cardholder.created',
        api_version: '2026-11-01',
        environment: 'sandbox',
        created_at: '2026-11-01T12:00:00.000Z',
        data: {
          object: {
            id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
            object: 'cardholder',
            type: 'individual',
            first_name: 'Ada',
            last_name: 'Lovelace',
            email: 'ada.lovelace@example.com',
            phone_number: '+447700900123',
            reference: 'cust-10042',
            address: null,
            kyc_status: 'not_started',
            has_identity_document: false,
            metadata: {},
            created_at: '2026-11-01T12:00:00.000Z',
            updated_at: '2026-11-01T12:00:00.000Z',
          },
        },
      },
    ],
  },
)

const Bound = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: 40,
      description: `${description}: ISO 8601 timestamp or Unix seconds.`,
    }),
  )

export const EventListQuery = Type.Object(
  {
    ...PageQuery,
    type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        examples: ['card.*'],
        description:
          'Only events of this type, in the forms `enabled_events` accepts: an exact type (`Event.type`, e.g. `card.created`), ' +
          `a prefix wildcard for every type of the prefix (${EVENT_WILDCARDS.slice(1)
            .map((f) => `\`${f}\``)
            .join(', ')}) or \`*\` (no filter). ` +
          `Anything else answers invalid_parameter naming \`type\`. The event catalogue (${EVENT_CATALOGUE_PATH}) lists every type.`,
      }),
    ),
    'created[gte]': Bound('Created at or after'),
    'created[gt]': Bound('Created strictly after'),
    'created[lte]': Bound('Created at or before'),
    'created[lt]': Bound('Created strictly before'),
  },
  { additionalProperties: false },
)

export const EventParams = Type.Object({ event_id: Type.String({ maxLength: 200 }) })

export const EventStreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        examples: ['card.*,authorization.created'],
        description:
          'Comma-separated subscription forms, as `enabled_events` takes them (`*`, `card.*`, `authorization.created`); ' +
          `default every type. An unknown form answers invalid_parameter naming \`types\`. The event catalogue: ${EVENT_CATALOGUE_PATH}.`,
      }),
    ),
    last_event_id: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Resume after this event, for clients that cannot send the `Last-Event-ID` header (the header wins when both are sent).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const EventStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'Resume after this event id (EventSource sends it on reconnect): every retained event created after it is sent first, oldest first.',
    }),
  ),
})
