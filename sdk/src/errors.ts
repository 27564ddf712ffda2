/**
 * Typed errors: every refusal of the service becomes an `SvcError` subclass chosen by the envelope's `type`, carrying
 * its `code`, `param`, `requestId`, HTTP `status` and response `headers`, so callers branch with `instanceof`.
 */

/** The error envelope's `type` values (the service's closed catalogue). */
export type SvcErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'validation_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'connection_error'

export interface SvcErrorFields {
  message: string
  type: SvcErrorType
  code?: string
  param?: string
  requestId?: string
  status?: number
  headers?: Record<string, string>
  docUrl?: string
  /** Every failing field when several failed (`invalid_parameter`). */
  errors?: { code: string; param: string; message: string }[]
  /** The parsed body as received. */
  raw?: unknown
  cause?: unknown
}

export class SvcError extends Error {
  readonly type: SvcErrorType
  readonly code?: string
  readonly param?: string
  readonly requestId?: string
  readonly status?: number
  readonly headers: Record<string, string>
  readonly docUrl?: string
  readonly errors?: { code: string; param: string; message: string }[]
  readonly raw?: unknown

  constructor(fields: SvcErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.name = new.target.name
    this.type = fields.type
    this.code = fields.code
    this.param = fields.param
    this.requestId = fields.requestId
    this.status = fields.status
    this.headers = fields.headers ?? {}
    this.docUrl = fields.docUrl
    this.errors = fields.errors
    this.raw = fields.raw
  }

  /** The subclass for an answer of the service: the `/v1` envelope, or the token endpoint's RFC 6749 shape. */
  static fromResponse(status: number, body: unknown, headers: Record<string, string>): SvcError {
    const requestId = headers['svc-request-id']
    const envelope = (body as { error?: unknown } | null)?.error
    if (envelope && typeof envelope === 'object') {
      const e = envelope as Record<string, unknown>
      const fields: SvcErrorFields = {
        message: typeof e.message === 'string' ? e.message : `HTTP ${status}`,
        type: (typeof e.type === 'string' ? e.type : 'api_error') as SvcErrorType,
        code: typeof e.code === 'string' ? e.code : undefined,
        param: typeof e.param === 'string' ? e.param : undefined,
        requestId: typeof e.request_id === 'string' ? e.request_id : requestId,
        docUrl: typeof e.doc_url === 'string' ? e.doc_url : undefined,
        errors: Array.isArray(e.errors) ? (e.errors as SvcErrorFields['errors']) : undefined,
        status,
        headers,
        raw: body,
      }
      if (fields.code === 'idempotency_key_reuse') return new SvcIdempotencyError(fields)
      return new (ERROR_CLASSES[fields.type] ?? SvcAPIError)(fields)
    }
    if (typeof envelope === 'string') {
      // The token endpoint answers {error, error_description} (RFC 6749).
      const description = (body as { error_description?: unknown }).error_description
      return new SvcAuthenticationError({
        message: typeof description === 'string' ? `${envelope}: ${description}` : envelope,
        type: 'authentication_error',
        code: envelope,
        requestId,
        status,
        headers,
        raw: body,
      })
    }
    const fields: SvcErrorFields = {
      message: `HTTP ${status} without an error envelope`,
      type: status === 429 ? 'rate_limit_error' : 'api_error',
      requestId,
      status,
      headers,
      raw: body,
    }
    return status === 429
      ? new SvcRateLimitError(fields)
      : status >= 500
        ? new SvcAPIError(fields)
        : new SvcInvalidRequestError({ ...fields, type: 'invalid_request_error' })
  }
}

/** A request the service refused as malformed, unknown or conflicting (400, 404, 409, …). */
export class SvcInvalidRequestError extends SvcError {}
/** 409 `idempotency_key_reuse`: the key was used with another body or endpoint. */
export class SvcIdempotencyError extends SvcInvalidRequestError {}
/** 401: no valid token (the SDK already refreshed once), or the token endpoint refused the client. */
export class SvcAuthenticationError extends SvcError {}
/** 403: a scope, the network policy or the environment forbids it. */
export class SvcPermissionError extends SvcError {}
/** 402 and 422: a business rule refused it (`insufficient_funds`, `card_invalid_state`, …). */
export class SvcValidationError extends SvcError {}
/** 429 after the retries ran out. */
export class SvcRateLimitError extends SvcError {}
/** 5xx after the retries ran out. */
export class SvcAPIError extends SvcError {}
/** No answer at all (refused connection, reset, timeout) after the retries ran out. */
export class SvcConnectionError extends SvcError {}
/** A webhook or authorization request whose signature does not verify. */
export class SvcSignatureVerificationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SvcSignatureVerificationError'
  }
}

const ERROR_CLASSES: Record<string, new (fields: SvcErrorFields) => SvcError> = {
  invalid_request_error: SvcInvalidRequestError,
  authentication_error: SvcAuthenticationError,
  permission_error: SvcPermissionError,
  validation_error: SvcValidationError,
  rate_limit_error: SvcRateLimitError,
  api_error: SvcAPIError,
}
