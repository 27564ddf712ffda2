/**
 * What the reference opens on: `info.description`, whose headings are the reference's first navigation entries ("Getting an
 * access token" before any operation), and the order of the tags after it: the token endpoint first, the API's
 * resources, any tag not listed here in the order its operations were registered, then the sandbox simulators, the
 * operator API and the platform's own endpoints (`/openapi.json`, `/healthz`) last.
 */

/** Tags in reading order; a tag missing here comes after them, before `LAST_TAGS`. */
const FIRST_TAGS = [
  'OAuth',
  'Programs',
  'Cardholders',
  'Accounts',
  'Cards',
  'Card secrets',
  'Authorizations',
  'Authorization rules',
  'Authorization endpoint',
  'Transactions',
  'FX rates',
  'Disputes',
  'Network tokens',
  '3-D Secure',
  'eSIM packages',
  'eSIM orders',
  'eSIMs',
  'eSIM H5',
  'Events',
  'Webhook endpoints',
  'Reports',
  'OAuth clients',
]
const LAST_TAGS = ['Simulator', 'Operator', 'Platform']

const TAG_DESCRIPTIONS: Record<string, string> = {
  OAuth:
    'The token endpoint and its metadata. How to get a token, step by step: ' +
    '[Getting an access token](#section/Getting-an-access-token).',
  Simulator:
    'Sandbox only (`/v1/simulate/…`, 404 in production): what the card network, the processor and the ' +
    'eSIM network would do.',
  Operator:
    "The platform operator's API (`/operator/v1`), with `SVC_OPERATOR_TOKEN` rather than an access token; " +
    '`npx svc operator METHOD PATH [BODY]` calls it.',
  Platform: 'The service itself, without a token: this document, liveness and readiness.',
}

/** The document's `tags`: every tag its operations use, in reading order. */
export function orderedTags(used: string[]): { name: string; description?: string }[] {
  const seen = [...new Set(used)]
  const first = FIRST_TAGS.filter((t) => seen.includes(t))
  const last = LAST_TAGS.filter((t) => seen.includes(t))
  const middle = seen.filter((t) => !FIRST_TAGS.includes(t) && !LAST_TAGS.includes(t))
  return [...first, ...middle, ...last].map((name) =>
    TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name },
  )
}

/** `info.description`: the API in a paragraph, then how to get a token (the reference's first section). */
export function introduction(baseUrl: string): string {
  return `svc issues cards (cardholders, accounts, cards, authorizations, transactions, disputes, network tokens, \
3-D Secure) and sells eSIM data packages through one OAuth-protected REST API at \`/v1\`. Money is an integer in the \
currency's minor units (\`1250\` in \`USD\` is 12.50 USD); currencies are ISO 4217 codes (\`USD\`), countries \
ISO 3166-1 alpha-3 codes (\`USA\`). Every error code is explained in the [error catalogue](/docs/errors); the \
[guides](/docs/guides) walk through whole flows.

# Getting an access token

Every \`/v1\` call sends \`Authorization: Bearer <access token>\`. A token is opaque (\`at_test_…\` in the sandbox, \
\`at_live_…\` in production), lives 900 seconds and has no refresh token: when it expires, get a new one the same way.

## In the sandbox: npx svc token

\`npm start\` creates a sandbox client and writes its private key to \`./.data/sandbox-client.json\`. In the project \
folder, \`npx svc token\` signs an assertion with that key, exchanges it at \`POST /oauth/token\` and prints the token \
(every scope the client holds; \`--scope "cards:read cards:write"\` asks for fewer):

\`\`\`sh
export SVC_BASE_URL=${baseUrl}
export SVC_TOKEN=$(npx svc token)
curl "$SVC_BASE_URL/v1/programs" -H "Authorization: Bearer $SVC_TOKEN"
\`\`\`

Every curl sample of this reference uses \`$SVC_BASE_URL\` and \`$SVC_TOKEN\`.

## Your own client: a signed assertion

1. Register the client's public key (a JWK Set, ES256 or RS256): the operator with \`npx svc client create\` \
(\`POST /operator/v1/clients\`), or a client of yours holding \`clients:write\` with \`POST /v1/oauth_clients\`. \
The answer's \`id\` (\`oc_…\`) is the client id. The private key never leaves you.
2. Sign a JWT with the private key: header \`alg\` \`ES256\` or \`RS256\` and the key's \`kid\`; claims \`iss\` and \
\`sub\` the client id, \`aud\` exactly \`${baseUrl}/oauth/token\`, \`iat\` now, \`exp\` at most 5 minutes ahead and a \
\`jti\` used once.
3. Exchange it (here in \`$ASSERTION\`) at [\`POST /oauth/token\`](#tag/OAuth/paths/~1oauth~1token/post) \
(client credentials with \`private_key_jwt\`, a form):

\`\`\`sh
curl -X POST "$SVC_BASE_URL/oauth/token" \\
  --data-urlencode "grant_type=client_credentials" \\
  --data-urlencode "client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer" \\
  --data-urlencode "client_assertion=$ASSERTION"
\`\`\`

\`\`\`json
{"access_token": "at_test_…", "token_type": "Bearer", "expires_in": 900, "scope": "cardholders:read cards:read …"}
\`\`\`

A \`scope\` field (space-separated) asks for fewer scopes than the client holds. Refusals keep the OAuth shape \
(\`{"error", "error_description"}\`). \`401 invalid_client\` means the client was not authenticated; until the \
signature is proven its description never says why, so check the client id, the key and its \`kid\`, \`alg\` and the \
address you call from. Once the signature is proven, a wrong \`aud\`, \`exp\` or \`iat\` is told what was expected.

## With the SDK

\`@svc/sdk\` signs the assertions, gets the token and renews it before it expires. Its samples in this reference \
call this client \`svc\`:

\`\`\`js
import { readFileSync } from 'node:fs'
import { Svc } from '@svc/sdk'

const client = JSON.parse(readFileSync('.data/sandbox-client.json', 'utf8'))
const svc = new Svc({ clientId: client.client_id, privateKey: client.private_jwk, baseUrl: '${baseUrl}' })
\`\`\`

# Code samples

Each operation shows its request body example, a curl call and the SDK call, with example ids of the right kind \
(\`card_…\`, \`acct_…\`). A \`/v1\` POST or PATCH sends an \`Idempotency-Key\` (the SDK makes one per call and \
reuses it when it retries), so a retry never acts twice. The sandbox's simulators, the operator API and the \
platform's own endpoints come after the resources.
`
}
