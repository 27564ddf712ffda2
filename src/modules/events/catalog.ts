/**
 * The event catalogue (decisions.md "Webhooks and events" and "Event catalogue", plus the endpoint's own
 * `webhook_endpoint.disabled` and `webhook_endpoint.test`): every type the service emits, what emits it, the object it
 * carries and the scope that reads it (the object's). It is published as the enum of `Event.type` and of
 * `enabled_events` in the OpenAPI document, and as the page docs/guides/event-catalogue.md (`npm run docs:events`
 * writes it from this list and the schemas' examples).
 */

/** What the catalogue says of each object an event carries: its OpenAPI schema, and who may read it. */
export interface EventObjectSpec {
  /** The OpenAPI schema that describes the object. */
  schema: string
  /**
   * The scope that reads the object: the scope of its own GET route (`retrieve`). An event is read with the scope of
   * its object, in every way events are read (the list, one event, the stream, replays).
   */
  scope: string
  /** The object's own GET route, in the OpenAPI document's form. */
  retrieve: string
}

/** The objects events carry in `data.object` (their `object` field). */
export const EVENT_OBJECTS = {
  cardholder: {
    schema: 'Cardholder',
    scope: 'cardholders:read',
    retrieve: 'GET /v1/cardholders/{cardholder_id}',
  },
  account: { schema: 'Account', scope: 'accounts:read', retrieve: 'GET /v1/accounts/{account_id}' },
  card: { schema: 'Card', scope: 'cards:read', retrieve: 'GET /v1/cards/{card_id}' },
  authorization: {
    schema: 'Authorization',
    scope: 'transactions:read',
    retrieve: 'GET /v1/authorizations/{authorization_id}',
  },
  transaction: {
    schema: 'Transaction',
    scope: 'transactions:read',
    retrieve: 'GET /v1/transactions/{transaction_id}',
  },
  dispute: {
    schema: 'Dispute',
    scope: 'transactions:read',
    retrieve: 'GET /v1/disputes/{dispute_id}',
  },
  network_token: {
    schema: 'NetworkToken',
    scope: 'cards:read',
    retrieve: 'GET /v1/network_tokens/{network_token_id}',
  },
  authentication: {
    schema: 'Authentication',
    scope: 'authentications:read',
    retrieve: 'GET /v1/authentications/{authentication_id}',
  },
  esim_order: {
    schema: 'EsimOrder',
    scope: 'esim:read',
    retrieve: 'GET /v1/esim/orders/{order_id}',
  },
  esim: { schema: 'EsimSummary', scope: 'esim:read', retrieve: 'GET /v1/esim/esims/{esim_id}' },
  authorization_rule: {
    schema: 'AuthorizationRule',
    scope: 'cards:read',
    retrieve: 'GET /v1/authorization_rules/{authorization_rule_id}',
  },
  authorization_rule_backtest: {
    schema: 'AuthorizationRuleBacktest',
    scope: 'cards:read',
    retrieve: 'GET /v1/authorization_rules/{authorization_rule_id}/backtests/{backtest_id}',
  },
  sandbox_clock: {
    schema: 'SandboxClock',
    scope: 'cardholders:read',
    retrieve: 'GET /v1/simulate/clocks/{clock_id}',
  },
  webhook_endpoint: {
    schema: 'WebhookEndpoint',
    scope: 'webhooks:write',
    retrieve: 'GET /v1/webhook_endpoints/{webhook_endpoint_id}',
  },
} as const satisfies Record<string, EventObjectSpec>

export type EventObject = keyof typeof EVENT_OBJECTS

/** One field an event of a type carries in `data` beside `data.object`. */
export interface EventDetailSpec {
  type: 'integer' | 'string' | 'nullable_string' | 'string_array'
  description: string
  example: string | number | null | string[]
}

export interface EventTypeSpec {
  /** The `object` of `data.object`. */
  object: EventObject
  /** What the event says beside its object, in `data` (`data.threshold_pct`), in this order. */
  details?: Record<string, EventDetailSpec>
  /** What causes it: the operation or job, in one sentence. */
  emittedBy: string
  /**
   * Who receives it. Omitted: every enabled endpoint whose `enabled_events` takes the type (`subscribes`).
   * `named_endpoint`: only the webhook endpoint the event carries (`data.object.id`), whatever its `enabled_events`;
   * never an endpoint subscribed to `*` or to the prefix, neither when it is emitted nor when it is replayed.
   */
  delivery?: 'named_endpoint'
}

/** Every type, in catalogue order. */
export const EVENT_CATALOGUE = {
  'cardholder.created': {
    object: 'cardholder',
    emittedBy: 'A cardholder is created with `POST /v1/cardholders`.',
  },
  'cardholder.updated': {
    object: 'cardholder',
    emittedBy:
      "`PATCH /v1/cardholders/{id}` changes something, or a KYC attestation changes the cardholder's address.",
  },
  'cardholder.kyc_updated': {
    object: 'cardholder',
    emittedBy:
      'A KYC attestation is recorded with `POST /v1/cardholders/{id}/kyc`, or the current attestation expires (the `kyc.expiry` job).',
  },
  'account.created': {
    object: 'account',
    emittedBy: 'An account is opened with `POST /v1/accounts`.',
  },
  'account.provisioned': {
    object: 'account',
    emittedBy:
      'The processor has opened the account: at once on `POST /v1/accounts`, or later through the `account.provision` job on processors that open accounts asynchronously.',
  },
  'account.credited': {
    object: 'account',
    emittedBy: 'Money is added with `POST /v1/accounts/{id}/credit`.',
  },
  'account.debited': {
    object: 'account',
    emittedBy:
      'Money is taken with `POST /v1/accounts/{id}/debit`, or an eSIM order or top-up is paid from the account.',
  },
  'account.blocked': {
    object: 'account',
    emittedBy: 'The account is blocked with `POST /v1/accounts/{id}/block`.',
  },
  'account.unblocked': {
    object: 'account',
    emittedBy: 'The account is unblocked with `POST /v1/accounts/{id}/unblock`.',
  },
  'card.created': {
    object: 'card',
    emittedBy:
      'A card is requested with `POST /v1/cards`, or a replacement card with `POST /v1/cards/{id}/replace`; it starts `pending`.',
  },
  'card.issued': {
    object: 'card',
    emittedBy:
      'The processor has issued a pending card: the `card.issue` job after the issuing delay, or `POST /v1/simulate/cards/{id}/issue` in sandbox.',
  },
  'card.activated': {
    object: 'card',
    emittedBy: 'The card is activated with `POST /v1/cards/{id}/activate`.',
  },
  'card.frozen': {
    object: 'card',
    emittedBy:
      'The card is frozen with `POST /v1/cards/{id}/freeze`, or by its cardholder on the traveller page.',
    details: {
      actor: {
        type: 'string',
        description:
          'who froze it: `organization` (the API or the console) or `cardholder` (the traveller page of an H5 link)',
        example: 'organization',
      },
      h5_link_id: {
        type: 'nullable_string',
        description:
          'the H5 link, `h5_…`, whose traveller page the cardholder used; null otherwise',
        example: null,
      },
    },
  },
  'card.unfrozen': {
    object: 'card',
    emittedBy:
      'The card is unfrozen with `POST /v1/cards/{id}/unfreeze`, or by its cardholder on the traveller page.',
    details: {
      actor: {
        type: 'string',
        description:
          'who unfroze it: `organization` (the API or the console) or `cardholder` (the traveller page of an H5 link)',
        example: 'organization',
      },
      h5_link_id: {
        type: 'nullable_string',
        description:
          'the H5 link, `h5_…`, whose traveller page the cardholder used; null otherwise',
        example: null,
      },
    },
  },
  'card.closed': {
    object: 'card',
    emittedBy:
      'The card is closed with `POST /v1/cards/{id}/close`, replaced as lost or stolen, or its replacement becomes active.',
  },
  'card.replaced': {
    object: 'card',
    emittedBy:
      '`POST /v1/cards/{id}/replace` orders a new card; the event carries the replaced card, whose `replaced_by` names the new one.',
  },
  'card.expired': {
    object: 'card',
    emittedBy: "The card's expiry month has ended (the `card.expire` job).",
  },
  'card.updated': {
    object: 'card',
    emittedBy:
      '`PATCH /v1/cards/{id}` changes the spending controls, the travel mode or the metadata of a card.',
  },
  'card.pin_set': { object: 'card', emittedBy: 'A PIN is set with `POST /v1/cards/{id}/pin`.' },
  'card.shipped': {
    object: 'card',
    emittedBy:
      "A physical card's shipping moves on (shipped, then delivered): `POST /v1/simulate/cards/{id}/ship` in sandbox.",
  },
  'authorization_rule.created': {
    object: 'authorization_rule',
    emittedBy: 'An authorization rule is created with `POST /v1/authorization_rules`.',
  },
  'authorization_rule.updated': {
    object: 'authorization_rule',
    emittedBy:
      '`PATCH /v1/authorization_rules/{id}` changes the name, parameters, mode or status of a rule.',
  },
  'authorization_rule.deleted': {
    object: 'authorization_rule',
    emittedBy:
      'A rule is deleted with `DELETE /v1/authorization_rules/{id}`; the event carries the rule as it was last.',
  },
  'authorization_rule.backtest_completed': {
    object: 'authorization_rule_backtest',
    emittedBy:
      'A backtest asked with `POST /v1/authorization_rules/{id}/backtests` has replayed its window: `completed` with ' +
      'its results, or `failed`.',
  },
  'card.details_viewed': {
    object: 'card',
    emittedBy:
      "A hosted card details page (`POST /v1/cards/{id}/reveal_sessions`) showed the card's number, CVC or " +
      'expiry in the frame it was made for (once per session).',
    details: {
      fields: {
        type: 'string_array',
        description: 'the fields the page showed, of `number`, `cvc`, `expiry`',
        example: ['number', 'cvc', 'expiry'],
      },
      reveal_session_id: {
        type: 'string',
        description: 'the reveal session, `crs_…`, whose page was viewed',
        example: 'crs_01JD3QF4G5H6J7K8M9N0P1Q2R3',
      },
    },
  },
  'authorization.created': {
    object: 'authorization',
    emittedBy:
      'A card payment is authorized, approved or declined: `POST /v1/simulate/authorizations` in sandbox.',
  },
  'authorization.updated': {
    object: 'authorization',
    emittedBy:
      "An authorization is incremented, reversed, captured or expired (the simulator's `increment`, `reverse`, `capture` and `expire`, or the `authorizations.expire` sweep after 7 days).",
  },
  'transaction.created': {
    object: 'transaction',
    emittedBy:
      'Money moves on a card: a capture of an authorization, a refund with `POST /v1/transactions/{id}/refund`, or a merchant refund (`POST /v1/simulate/refunds` in sandbox).',
  },
  'transaction.updated': {
    object: 'transaction',
    emittedBy:
      'A capture settles (the `transactions.settle` sweep, or `POST /v1/simulate/transactions/{id}/settle`) or is refunded.',
  },
  'dispute.created': {
    object: 'dispute',
    emittedBy: 'A settled capture is disputed with `POST /v1/disputes`.',
  },
  'dispute.updated': {
    object: 'dispute',
    emittedBy:
      'A dispute goes under review (the `dispute.review` job), is withdrawn with `POST /v1/disputes/{id}/withdraw`, or is won or lost (`POST /v1/simulate/disputes/{id}/resolve` in sandbox).',
  },
  'sandbox_clock.created': {
    object: 'sandbox_clock',
    emittedBy: 'A sandbox clock is created with `POST /v1/simulate/clocks`.',
  },
  'sandbox_clock.ready': {
    object: 'sandbox_clock',
    emittedBy:
      'An advance of a sandbox clock (`POST /v1/simulate/clocks/{id}/advance`) has run everything that fell due on it; the clock is `ready` at its new time.',
  },
  'sandbox_clock.deleted': {
    object: 'sandbox_clock',
    emittedBy:
      'A sandbox clock is deleted with `DELETE /v1/simulate/clocks/{id}`, or 30 days after its creation (`deletes_after`).',
  },
  'network_token.created': {
    object: 'network_token',
    emittedBy:
      'A wallet requests a token for a card: `POST /v1/simulate/network_tokens` in sandbox.',
  },
  'network_token.updated': {
    object: 'network_token',
    emittedBy:
      'A token is activated, suspended, resumed or deleted (`POST /v1/network_tokens/{id}/suspend`, `/resume`, `/delete`), or deleted because its card closed.',
  },
  'authentication.created': {
    object: 'authentication',
    emittedBy:
      'A merchant checkout asks for a 3-D Secure challenge: `POST /v1/simulate/authentications` in sandbox.',
  },
  'authentication.updated': {
    object: 'authentication',
    emittedBy:
      'A challenge is approved or declined (`POST /v1/authentications/{id}/approve` or `/decline`), or expires after 5 minutes (the `authentication.expire` job).',
  },
  'esim_order.created': {
    object: 'esim_order',
    emittedBy:
      'An order is placed with `POST /v1/esim/orders` (completed, or `unsettled` when the network did not answer in time), a top-up with `POST /v1/esim/esims/{id}/top_ups`, ' +
      'or an auto top-up (`trigger: auto`) runs.',
  },
  'esim_order.settled': {
    object: 'esim_order',
    emittedBy:
      'An unsettled order completes (the `esim.settle_orders` job, or `POST /v1/simulate/esim/orders/{id}/settle`).',
  },
  'esim_order.failed': {
    object: 'esim_order',
    emittedBy:
      'Settlement fails an unsettled order (the `esim.settle_orders` job, or `POST /v1/simulate/esim/orders/{id}/settle`), or the network fails an auto top-up; ' +
      'nothing is charged (an auto top-up is credited back).',
  },
  'esim.topped_up': {
    object: 'esim',
    emittedBy:
      'A top-up adds a package to the eSIM (`POST /v1/esim/esims/{id}/top_ups`, or an auto top-up when usage crosses its trigger).',
  },
  'esim.auto_top_up_failed': {
    object: 'esim',
    emittedBy:
      "Usage crossed the eSIM's auto top-up trigger (`PATCH /v1/esim/esims/{id}` `auto_top_up`) but no top-up ran: the account " +
      'lacks funds or refused, the monthly cap is reached, the add-on is no longer accepted, or the network failed it (the ' +
      'debit credited back). The next crossing tries again.',
    details: {
      reason: {
        type: 'string',
        description:
          'insufficient_funds, account_blocked, account_not_found, account_not_provisioned, currency_mismatch, ' +
          'top_up_unavailable, max_per_month_reached or provisioning_failed',
        example: 'insufficient_funds',
      },
    },
  },
  'esim.low_data': {
    object: 'esim',
    emittedBy:
      'The running package crosses 80 % of its data (usage reports; `POST /v1/simulate/esim/esims/{id}/usage` in sandbox).',
  },
  'esim.depleted': {
    object: 'esim',
    emittedBy:
      'The running package has used all its data (usage reports; `POST /v1/simulate/esim/esims/{id}/usage` in sandbox).',
  },
  'esim.usage_threshold_reached': {
    object: 'esim',
    emittedBy:
      'The running package reaches one of the usage thresholds of the alert settings (`PUT /v1/esim/alert_settings`, or the ' +
      "eSIM's own in `PATCH /v1/esim/esims/{id}`), once per threshold per package (usage reports; " +
      '`POST /v1/simulate/esim/esims/{id}/usage` in sandbox).',
    details: {
      threshold_pct: {
        type: 'integer',
        description: 'The threshold reached, in percent of the package',
        example: 80,
      },
      data_used_mb: {
        type: 'integer',
        description: 'Data used on the package when it was reached',
        example: 2458,
      },
      data_remaining_mb: {
        type: 'integer',
        description: 'Data left on the package then',
        example: 614,
      },
    },
  },
  'esim.validity_expiring': {
    object: 'esim',
    emittedBy:
      "The eSIM's validity (its last package's) ends within one of the warning hours of the alert settings, once per " +
      'warning (the `esim.check_validity` sweep, every minute).',
    details: {
      hours_left: {
        type: 'integer',
        description: 'Whole hours left before the validity ends (rounded up)',
        example: 24,
      },
    },
  },
  'esim.expired': {
    object: 'esim',
    emittedBy:
      'The validity of the last package on the eSIM has ended (the `esim.check_validity` sweep, every minute).',
  },
  'esim.installed': {
    object: 'esim',
    emittedBy:
      'The profile is installed on a device: the network says so (`POST /v1/simulate/esim/esims/{id}/install` in sandbox), ' +
      'or data flows before it did.',
  },
  'esim.first_used': {
    object: 'esim',
    emittedBy:
      'The first usage report with data used on the eSIM (`POST /v1/simulate/esim/esims/{id}/usage` in sandbox).',
  },
  'esim.country_changed': {
    object: 'esim',
    emittedBy:
      'The device attaches to a network in another country (`POST /v1/simulate/esim/esims/{id}/location` in sandbox).',
    details: {
      country: {
        type: 'string',
        description: 'Where the device is now (three-letter code)',
        example: 'JPN',
      },
      previous_country: {
        type: 'nullable_string',
        description: 'Where it was before; null at its first attachment',
        example: 'FRA',
      },
    },
  },
  'esim.canceled': {
    object: 'esim',
    emittedBy:
      'An eSIM never installed nor used is canceled with `POST /v1/esim/esims/{id}/cancel`; its orders are refunded.',
  },
  'esim.updated': {
    object: 'esim',
    emittedBy:
      'The network suspends or resumes the eSIM (`POST /v1/esim/esims/{id}/suspend` and `/resume`).',
  },
  'webhook_endpoint.disabled': {
    object: 'webhook_endpoint',
    emittedBy:
      'The delivery worker disables an endpoint that has failed without a single success for the whole retry period (72 hours).',
  },
  'webhook_endpoint.test': {
    object: 'webhook_endpoint',
    emittedBy:
      '`POST /v1/webhook_endpoints/{id}/test` sends it to that endpoint only, whatever its `enabled_events`; no other endpoint receives it, not even one subscribed to `*`.',
    delivery: 'named_endpoint',
  },
} as const satisfies Record<string, EventTypeSpec>

export type EventType = keyof typeof EVENT_CATALOGUE

/** Every event type, in catalogue order. */
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as readonly EventType[]

/** The part of a type before its dot: `card` for `card.created`, `esim_order` for `esim_order.settled`. */
export function eventPrefix(type: string): string {
  const dot = type.indexOf('.')
  return dot < 0 ? type : type.slice(0, dot)
}

/** Prefixes that have types, in catalogue order (`cardholder`, `account`, `card`, …). */
export const EVENT_PREFIXES: readonly string[] = [...new Set(EVENT_TYPES.map(eventPrefix))]

/** `*` and one `<prefix>.*` per prefix: the wildcards a subscription or the events list's `type` filter may use. */
export const EVENT_WILDCARDS: readonly string[] = ['*', ...EVENT_PREFIXES.map((p) => `${p}.*`)]

/** Every value `enabled_events` and `GET /v1/events?type=` accept: the wildcards, then the exact types. */
export const SUBSCRIPTION_FORMS: readonly string[] = [...EVENT_WILDCARDS, ...EVENT_TYPES]

/** Where the catalogue page is served, under BASE_URL. */
export const EVENT_CATALOGUE_PATH = '/docs/guides/event-catalogue'

const KNOWN = new Set<string>(EVENT_TYPES)
const FORMS = new Set<string>(SUBSCRIPTION_FORMS)
const PREFIXES = new Set<string>(EVENT_PREFIXES)

/** Types delivered only to the endpoint they carry (`delivery: 'named_endpoint'`), never by subscription. */
export const NAMED_ENDPOINT_TYPES: readonly EventType[] = EVENT_TYPES.filter(
  (t) => (EVENT_CATALOGUE[t] as EventTypeSpec).delivery === 'named_endpoint',
)

const NAMED = new Set<string>(NAMED_ENDPOINT_TYPES)

/** True for a type that goes only to the endpoint it carries (`webhook_endpoint.test`). */
export function deliveredToNamedEndpoint(type: string): boolean {
  return NAMED.has(type)
}

/** True for a type in the catalogue. */
export function isEventType(value: string): value is EventType {
  return KNOWN.has(value)
}

/** True for `*`, a catalogue type or a known prefix wildcard (`card.*`). */
export function isSubscriptionForm(value: string): boolean {
  return FORMS.has(value)
}

/**
 * Whether an endpoint subscribed to `enabledEvents` receives events of `type`: `*`, the type itself, or its prefix
 * wildcard; never a type delivered only to the endpoint it names (`webhook_endpoint.test`). Replays decide with it;
 * new events apply the same rule in SQL (`subscribedSql`, used by `deliveriesWithin`).
 */
export function subscribes(enabledEvents: readonly string[], type: string): boolean {
  if (NAMED.has(type)) return false
  return (
    enabledEvents.includes('*') ||
    enabledEvents.includes(type) ||
    enabledEvents.includes(`${eventPrefix(type)}.*`)
  )
}

/**
 * The catalogue types an accepted form stands for, as list filters read them: `*` is null (no filter), an exact
 * type itself, a prefix wildcard every type of the prefix. Lists read one index range per type and merge them.
 */
export function typesOfForm(form: string): readonly EventType[] | null {
  if (form === '*') return null
  if (form.endsWith('.*')) {
    const prefix = form.slice(0, -2)
    return EVENT_TYPES.filter((t) => eventPrefix(t) === prefix)
  }
  return EVENT_TYPES.filter((t) => t === form)
}

/** The scope that reads events of `type`: the scope of the object it carries (`EVENT_OBJECTS`). */
export function eventScope(type: EventType): string {
  return EVENT_OBJECTS[EVENT_CATALOGUE[type].object].scope
}

/**
 * The event types a caller reads: `'every'` type, or only these (a token whose scopes read some objects only). A token
 * reads a type when it holds the type's `eventScope`; the console's members read every type.
 */
export type ReadableTypes = 'every' | readonly EventType[]

/** The types a token holding `scopes` reads, in catalogue order; `'every'` when it reads them all. */
export function readableTypes(scopes: ReadonlySet<string>): ReadableTypes {
  const types = EVENT_TYPES.filter((t) => scopes.has(eventScope(t)))
  return types.length === EVENT_TYPES.length ? 'every' : types
}

/** Whether a caller that reads `readable` reads events of `type`. */
export function readsType(readable: ReadableTypes, type: string): boolean {
  return readable === 'every' || (readable as readonly string[]).includes(type)
}

/**
 * Validates one subscription entry (an `enabled_events` item, the events list's `type`): null when it is accepted,
 * else why not, in a sentence that points at the catalogue page under `baseUrl`. The request schema's `x-refusals` and
 * `x-refusal` carry the same sentences, so a refusal reads the same whichever check meets it first.
 */
export function subscriptionRefusal(value: string, baseUrl: string): string | null {
  if (isSubscriptionForm(value)) return null
  const bare = barePrefixRefusals(baseUrl)[value]
  return bare ?? subscriptionRefusalTemplate(baseUrl).replace('{value}', () => value)
}

/** The refusal of any unknown value, `{value}` standing for it (a schema's `x-refusal`, read by the validation error mapping). */
export function subscriptionRefusalTemplate(baseUrl: string): string {
  return (
    `Unknown event type "{value}": use "*", an exact type such as "card.created" or a prefix wildcard such as "card.*"; ` +
    `the event catalogue lists them: ${baseUrl}${EVENT_CATALOGUE_PATH}`
  )
}

/** The refusals of bare prefixes (`card` instead of `card.*`), by value (a schema's `x-refusals`). */
export function barePrefixRefusals(baseUrl: string): Record<string, string> {
  return Object.fromEntries(
    [...PREFIXES].map((p) => [
      p,
      `"${p}" is not an event type: use "${p}.*" for every ${p} event, or an exact type; ` +
        `the event catalogue lists them: ${baseUrl}${EVENT_CATALOGUE_PATH}`,
    ]),
  )
}
