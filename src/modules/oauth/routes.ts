import type { FastifyInstance, FastifyReply } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { clientAddress } from '../../http/ip.js'
import { OAUTH_STATUS, OAuthError } from './oauth-error.js'
import { SCOPES, scopeIssuable } from './scopes.js'
import {
  ACCESS_TOKEN_TTL_SECONDS,
  CLIENT_ASSERTION_TYPE,
  acceptedAudiences,
  issueToken,
} from './service.js'

const FORM_FIELDS = [
  'grant_type',
  'client_assertion_type',
  'client_assertion',
  'scope',
  'client_id',
]

function sendOAuthError(reply: FastifyReply, err: OAuthError): FastifyReply {
  return reply
    .code(OAUTH_STATUS[err.error])
    .headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' })
    .send({ error: err.error, error_description: err.description })
}

/** Parses the form body; a repeated parameter is refused as RFC 6749 asks. */
function parseForm(body: string): Record<string, string> | OAuthError {
  const params = new URLSearchParams(body)
  const out: Record<string, string> = {}
  for (const [key, value] of params) {
    if (key in out) return new OAuthError('invalid_request', `${key} is repeated.`)
    out[key] = value
  }
  return out
}

/** POST /oauth/token and its RFC 8414 metadata; the token endpoint speaks the flat OAuth error shape. */
export function registerOauth(app: FastifyInstance, deps: AppDeps): void {
  const tokenUrl = `${deps.config.baseUrl}/oauth/token`

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { public: true },
      schema: { tags: ['OAuth'], summary: 'Authorization server metadata (RFC 8414)' },
    },
    async () => ({
      issuer: deps.config.baseUrl,
      token_endpoint: tokenUrl,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256'],
      scopes_supported: SCOPES.filter((s) => scopeIssuable(s, deps.config.releases)),
      response_types_supported: [],
    }),
  )

  app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_req, body, done) => {
        const parsed = parseForm(body as string)
        if (parsed instanceof OAuthError) return done(parsed, undefined)
        done(null, parsed)
      },
    )
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => {
      done(
        new OAuthError(
          'invalid_request',
          'Send the token request as application/x-www-form-urlencoded.',
        ),
        undefined,
      )
    })
    scope.setErrorHandler((err, req, reply) => {
      if (err instanceof OAuthError) {
        req.log.info(
          { req_id: req.id, oauth_error: err.error, reason: err.reason ?? err.description },
          'token request refused',
        )
        return sendOAuthError(reply, err)
      }
      const status = (err as { statusCode?: number }).statusCode
      if (status && status >= 400 && status < 500)
        return sendOAuthError(
          reply,
          new OAuthError('invalid_request', 'The token request is malformed.'),
        )
      req.log.error({ err }, 'token endpoint failure')
      return sendOAuthError(
        reply,
        new OAuthError('server_error', 'The token could not be issued; retry once.'),
      )
    })
    scope.post(
      '/oauth/token',
      {
        config: { public: true, oauthErrors: OAUTH_STATUS },
        schema: {
          tags: ['OAuth'],
          summary: 'Exchange a signed client assertion for an access token',
          description: `client_credentials with private_key_jwt. The assertion is a JWT signed with ES256 or RS256: iss = sub = client id, aud = ${tokenUrl} exactly, exp at most 5 minutes ahead, unique jti. Answers ${ACCESS_TOKEN_TTL_SECONDS}-second opaque tokens. Errors use the flat RFC 6749 shape.`,
          consumes: ['application/x-www-form-urlencoded'],
          body: {
            type: 'object',
            properties: {
              grant_type: { type: 'string', enum: ['client_credentials'] },
              client_assertion_type: { type: 'string', enum: [CLIENT_ASSERTION_TYPE] },
              client_assertion: { type: 'string', description: 'The signed JWT' },
              scope: {
                type: 'string',
                description: 'Space-separated scopes; omitted = every scope the client holds',
              },
              client_id: { type: 'string', description: 'Optional; must equal the assertion iss' },
            },
          },
          response: {
            200: {
              type: 'object',
              properties: {
                access_token: { type: 'string' },
                token_type: { type: 'string' },
                expires_in: { type: 'integer' },
                scope: { type: 'string' },
              },
            },
          },
        },
        // The form is checked by the grant itself so every failure keeps the OAuth shape.
        validatorCompiler: () => (data: unknown) => ({ value: data }),
      },
      async (req, reply) => {
        const form = (req.body ?? {}) as Record<string, string>
        for (const key of Object.keys(form)) if (!FORM_FIELDS.includes(key)) delete form[key]
        const token = await issueToken(
          deps,
          form,
          clientAddress(req),
          acceptedAudiences(deps, `${req.protocol}://${req.host}/oauth/token`),
        )
        return reply.headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).send(token)
      },
    )
  })
}
