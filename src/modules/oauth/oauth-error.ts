/** A token-endpoint refusal in the flat RFC 6749 shape `{error, error_description}`. */
export type OAuthErrorCode =
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'server_error'

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

/** When the token endpoint answers each code (docs/auth.md, "Token endpoint errors"); listed on /docs/errors. */
export const OAUTH_ERROR_WHEN: Record<OAuthErrorCode, string> = {
  invalid_client: `The client cannot be authenticated: unknown, revoked or of an environment this deployment does not serve; \`alg\` not ES256 or RS256; \`iss\` and \`sub\` differ, or the \`client_id\` field is not \`iss\`; unknown \`kid\`; the signature does not verify; the source address is outside the network policy or the client allowlist; \`aud\` not exactly the token endpoint URL; \`exp\` missing, past or more than 5 minutes ahead; \`iat\` missing, in the future or too old; \`nbf\` in the future. Until the signature is proven the description is always \`${GENERIC_CLIENT_FAILURE}\``,
  invalid_grant:
    "The assertion's `jti` was already redeemed: sign a new assertion with a fresh `jti`.",
  invalid_scope:
    'A requested scope is not a scope, is not held by the client, or is not issued by this deployment.',
  invalid_request:
    'A required form field is missing or repeated; `client_assertion_type` is not the JWT bearer URN; the JWT is malformed or has no `jti`; the body is not `application/x-www-form-urlencoded`.',
  unsupported_grant_type: '`grant_type` is not `client_credentials`.',
  server_error: 'Failure on the service side; retry once.',
}

export class OAuthError extends Error {
  /** `reason` is for the service log only; the client sees `description`. */
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly reason?: string,
  ) {
    super(description)
    this.name = 'OAuthError'
  }
  get status(): number {
    return OAUTH_STATUS[this.error]
  }
}
