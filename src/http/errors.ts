/** The closed catalogue of error codes: each maps to one HTTP status, type and retry rule, rendered in one place. */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'validation_error'
  | 'rate_limit_error'
  | 'api_error'

export interface ErrorSpec {
  status: number
  type: ErrorType
  retryable: boolean
  /** Public description: shown as the default message and on /docs/errors. */
  description: string
}

const invalid = (status: number, description: string, retryable = false): ErrorSpec => ({
  status,
  type: 'invalid_request_error',
  retryable,
  description,
})
const validation = (description: string, retryable = false): ErrorSpec => ({
  status: 422,
  type: 'validation_error',
  retryable,
  description,
})

export const ERROR_CATALOGUE = {
  invalid_request_body: invalid(400, 'The request body is not valid JSON or is not a JSON object.'),
  missing_parameter: invalid(400, 'A required parameter is missing; `param` names it.'),
  invalid_parameter: invalid(
    400,
    'A parameter has the wrong type, format or range. When several fail, `errors` lists each.',
  ),
  unknown_parameter: invalid(
    400,
    'A parameter is not accepted by this endpoint; `param` names it.',
  ),
  invalid_public_key: invalid(
    400,
    'The RSA public key is malformed, shorter than 2048 bits, its public exponent is not 65537, or its modulus is even or has a prime factor below 10,000.',
  ),
  expired_cursor: invalid(
    400,
    'The pagination cursor is older than 24 hours; start the traversal again.',
  ),
  invalid_webhook_url: invalid(400, 'The webhook URL must be HTTPS on a publicly resolvable host.'),
  request_too_large: invalid(
    413,
    'The request body exceeds the size limit of this endpoint (1 MiB; 85 MiB for KYC uploads).',
  ),
  request_timeout: invalid(
    408,
    'The request did not arrive in time: the request line and headers are due within 10 s, the whole request (body included) within 30 s (defaults of the deployment); the body of a KYC upload no slower than 64 KiB/s over any 5 s. The connection is closed; send the request again without pausing.',
    true,
  ),
  request_header_too_large: invalid(
    431,
    'The request line and headers exceed 16 KiB (a long query string counts); send long values in a body.',
  ),
  missing_credentials: {
    status: 401,
    type: 'authentication_error',
    retryable: false,
    description: 'No `Authorization: Bearer` header was sent.',
  },
  invalid_access_token: {
    status: 401,
    type: 'authentication_error',
    retryable: false,
    description:
      'The access token is expired, unknown, or its client was revoked. Obtain a new token and retry once.',
  },
  insufficient_scope: {
    status: 403,
    type: 'permission_error',
    retryable: false,
    description: 'The access token lacks the scope this operation requires.',
  },
  ip_not_allowed: {
    status: 403,
    type: 'permission_error',
    retryable: false,
    description: 'The source address is not permitted by the network policy.',
  },
  environment_mismatch: {
    status: 403,
    type: 'permission_error',
    retryable: false,
    description: 'The token belongs to another environment than the object or deployment.',
  },
  not_found: invalid(
    404,
    'No such route. Unmounted operations and simulator routes in production answer the same.',
  ),
  method_not_allowed: invalid(
    405,
    'The path exists but does not take this method; the `Allow` header lists those it takes.',
  ),
  cardholder_not_found: invalid(404, 'No cardholder with this id.'),
  account_not_found: invalid(404, 'No account with this id.'),
  card_not_found: invalid(404, 'No card with this id.'),
  authorization_not_found: invalid(404, 'No authorization with this id.'),
  transaction_not_found: invalid(404, 'No transaction with this id.'),
  dispute_not_found: invalid(404, 'No dispute with this id.'),
  sandbox_clock_not_found: invalid(404, 'No sandbox clock with this id (or it was deleted).'),
  authentication_not_found: invalid(404, 'No 3-D Secure authentication with this id.'),
  esim_package_not_found: invalid(404, 'No eSIM package with this id.'),
  esim_order_not_found: invalid(
    404,
    'No eSIM order with this id. After a timed-out create, list orders by your own reference.',
  ),
  esim_not_found: invalid(404, 'No eSIM with this id.'),
  token_not_found: invalid(
    404,
    'No network token or PIN key with this id (also a PIN key minted for a card of another program).',
  ),
  event_not_found: invalid(404, 'No event with this id (events are kept 30 days).'),
  webhook_endpoint_not_found: invalid(404, 'No webhook endpoint with this id.'),
  authorization_endpoint_not_found: invalid(
    404,
    'No authorization endpoint is registered in this environment (PUT /v1/authorization_endpoint registers one).',
  ),
  report_not_found: invalid(404, 'No report with this id.'),
  authorization_rule_not_found: invalid(404, 'No authorization rule with this id.'),
  authorization_rule_backtest_not_found: invalid(
    404,
    'No backtest of this authorization rule with this id.',
  ),
  organization_not_found: invalid(404, 'No organization with this id.'),
  program_not_found: invalid(404, 'No program with this id.'),
  client_not_found: invalid(404, 'No OAuth client with this id.'),
  user_not_found: invalid(404, 'No console member with this id in the organization.'),
  idempotency_key_reuse: invalid(
    409,
    'This Idempotency-Key was used with a different body or on a different endpoint.',
  ),
  idempotency_request_in_progress: invalid(
    409,
    'The original request with this key (or client_transaction_id) is still running; retry after a short backoff.',
    true,
  ),
  adjustment_already_applied: invalid(
    409,
    'This client_transaction_id was already applied with a different amount or direction.',
  ),
  cardholder_already_exists: invalid(
    409,
    'Another cardholder of the organization has this email or phone number; `param` names which.',
  ),
  esim_order_reference_exists: invalid(
    409,
    'An eSIM order or top-up of the organization already has this reference.',
  ),
  user_already_exists: invalid(
    409,
    'This email already has a console account: the person can sign in, or belongs to another organization.',
  ),
  sandbox_clock_advancing: invalid(
    409,
    'An advance of this sandbox clock is running; retry once the clock is `ready` again (GET it).',
    true,
  ),
  dispute_already_open: invalid(
    409,
    'The transaction already has an open dispute (submitted or under review).',
  ),
  webhook_endpoint_limit_reached: validation('At most 10 webhook endpoints per environment.'),
  identity_document_required: validation('The cardholder has no identity document.'),
  address_required: validation('The cardholder has no address.'),
  kyc_not_approved: validation("The cardholder's kyc_status is not approved."),
  address_change_requires_kyc: validation(
    'This program cannot take an address change by PATCH; report a KYC attestation carrying the new address.',
  ),
  kyc_identity_required: validation(
    'The program runs its own identity check and the current attestation carries no identity, or its documents are no longer held.',
  ),
  insufficient_funds: {
    status: 402,
    type: 'validation_error',
    retryable: false,
    description: 'The available balance is too low. Fund the account, then retry.',
  },
  account_blocked: validation('The account is blocked.'),
  currency_mismatch: validation('The currencies of the operation differ.'),
  account_cardholder_mismatch: validation(
    'The account belongs to another cardholder than the one named.',
  ),
  account_not_provisioned: validation(
    'The account does not exist at the processor yet (has_upstream_reference is false).',
  ),
  account_not_fundable: validation('The account cannot take a credit in its current state.'),
  card_invalid_state: validation('The card status does not permit the operation.'),
  card_already_activated: validation('The card is already active.'),
  card_closed: validation('The card is closed.'),
  card_not_provisioned: validation(
    'The processor has not issued the card yet; wait for card.issued.',
  ),
  card_limit_reached: validation('The processor allows one card per cardholder and one exists.'),
  unsupported_form_factor: validation(
    'The program does not issue this form factor; the message lists those it does.',
  ),
  embossed_name_required: validation('embossed_name is required for every card.'),
  delivery_address_required: validation(
    'A complete delivery_address (name, line1, city, postal_code, country) is required on every card.',
  ),
  card_type_not_configured: validation('The program has no product for this card_type.'),
  pin_invalid: validation(
    'The PIN has the wrong length, is not all digits, or is not encrypted to the key given; nothing was sent to the processor.',
  ),
  transaction_not_refundable: validation(
    'The transaction is not settled, or already fully refunded.',
  ),
  refund_exceeds_original: validation('The refund is larger than what remains of the transaction.'),
  token_invalid_state: validation('The network token status does not permit the operation.'),
  token_deleted: validation('The network token is deleted; deletion is terminal.'),
  authorization_invalid_state: validation(
    'The authorization status does not permit the operation (only pending ones can be incremented, reversed or expired; pending or expired ones captured).',
  ),
  authentication_invalid_state: validation(
    'The 3-D Secure authentication is no longer pending (already approved, declined, or expired after 5 minutes).',
  ),
  dispute_invalid_state: validation(
    'The dispute status does not permit the operation (won, lost and withdrawn are final).',
  ),
  program_not_provisioned: validation(
    'No program is attached in this environment, or the named one cannot be served by this deployment.',
  ),
  program_not_configured: validation(
    "The program's processor configuration does not cover the operation.",
  ),
  spend_control_unsupported: validation(
    'A requested spending control cannot be enforced by the processor.',
  ),
  operation_unsupported: validation('The processor has no such operation.'),
  esim_package_unavailable: validation('The eSIM package is frozen or withdrawn.'),
  esim_top_up_unavailable: validation(
    'The add-on is no longer sold, or the package it extends is not running.',
  ),
  esim_inventory_exhausted: validation('No eSIM is left to provision; nothing was charged.', true),
  esim_invalid_state: validation(
    'The eSIM status does not permit the operation (nothing acts on a canceled eSIM, no data flows on a suspended one; only an eSIM never installed nor used is canceled).',
  ),
  last_owner: validation(
    'An organization keeps at least one owner: make another member owner before changing or removing this one.',
  ),
  report_not_ready: validation(
    'The report has no file yet: it is pending (poll it until it has succeeded) or it failed (create a new one).',
  ),
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    retryable: true,
    description: 'Too many requests. Wait for the Retry-After header, then retry with jitter.',
  },
  internal_error: {
    status: 500,
    type: 'api_error',
    retryable: true,
    description: 'Unexpected failure on the service side; retry with backoff.',
  },
  processor_unavailable: {
    status: 502,
    type: 'api_error',
    retryable: true,
    description: 'A dependency failed or timed out.',
  },
  processor_permission_denied: {
    status: 502,
    type: 'api_error',
    retryable: true,
    description: 'A dependency refused the service.',
  },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof ERROR_CATALOGUE

export interface FieldError {
  code: ErrorCode
  param: string
  message: string
}

export interface ApiErrorOptions {
  param?: string
  message?: string
  errors?: FieldError[]
  headers?: Record<string, string>
  /** Internal detail for logs only; never sent to the client. */
  detail?: unknown
}

/** The only error type the service throws on purpose; the error handler renders it as the envelope. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly spec: ErrorSpec
  readonly param?: string
  readonly errors?: FieldError[]
  readonly headers?: Record<string, string>
  readonly detail?: unknown

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    const spec = ERROR_CATALOGUE[code]
    super(options.message ?? spec.description)
    this.name = 'ApiError'
    this.code = code
    this.spec = spec
    this.param = options.param
    this.errors = options.errors
    this.headers = options.headers
    this.detail = options.detail
  }

  get status(): number {
    return this.spec.status
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError
}

/** The fields an error names: its `errors` entries, or itself as one field. */
export function fieldsOf(err: ApiError): FieldError[] {
  return err.errors ?? [{ code: err.code, param: err.param ?? '', message: err.message }]
}

/**
 * The one answer for failing fields (interface: Errors): a single field keeps its own code and message;
 * several answer `invalid_parameter` with one `errors` entry each, the first field as `param`.
 */
export function fieldErrors(
  fields: FieldError[],
  message = `${fields.length} parameters are invalid; see errors.`,
): ApiError {
  if (fields.length === 1)
    return new ApiError(fields[0].code, { param: fields[0].param, message: fields[0].message })
  return new ApiError('invalid_parameter', { param: fields[0]?.param, message, errors: fields })
}
