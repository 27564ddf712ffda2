/** A token-endpoint refusal in the flat RFC 6749 shape `{error, error_description}`. */
export type OAuthErrorCode = 'invalid_client' | 'invalid_grant' | 'invalid_scope' | 'invalid_request' | 'unsupported_grant_type' | 'server_error'

export const OAUTH_STATUS: Record<OAuthErrorCode, number> = {
  invalid_client: 401,
  invalid_grant: 400,
  invalid_scope: 400,
  invalid_request: 400,
  unsupported_grant_type: 400,
  server_error: 500,
}

/** The one description for every refusal before the assertion's signature is proven: nothing to probe with. */
export const GENERIC_CLIENT_FAILURE = 'Client authentication failed.'

export class OAuthError extends Error {
  /** `reason` is for the service log only; the client sees `description`. */
  constructor(readonly error: OAuthErrorCode, readonly description: string, readonly reason?: string) {
    super(description)
    this.name = 'OAuthError'
  }
  get status(): number { return OAUTH_STATUS[this.error] }
}
