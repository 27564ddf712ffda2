import { createHash } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import swagger from '@fastify/swagger'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { preferredEncoding } from './encoding.js'
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js'
import { codeSamples } from './openapi-code-samples.js'
import {
  compactDocument,
  REQUEST_ID_HEADER_REF,
  RETRY_AFTER_HEADER_REF,
  shareErrorResponses,
} from './openapi-compact.js'
import { addRequestExample, documentIds, type ExampleContext } from './openapi-examples.js'
import { introduction, orderedTags } from './openapi-intro.js'
import { simplifyDocumentSchemas } from './openapi-simplify.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Catalogue codes this operation can answer beyond the common ones; listed in the OpenAPI document. */
    errors?: ErrorCode[]
    /** The operation answers 201 (a route without a response schema would otherwise be documented as 200). */
    created?: boolean
    /** The token endpoint: its refusals use the flat RFC 6749 shape, these codes at these statuses, instead of the envelope. */
    oauthErrors?: Record<string, number>
  }
}

interface OperationExtras {
  capability?: string
  scope?: string
  simulator?: boolean
  errors: ErrorCode[]
  created?: boolean
  oauthErrors?: Record<string, number>
  /** false: Idempotency-Key is accepted but unused (config.idempotent). */
  idempotent?: boolean
}

const IDEMPOTENCY_KEY_PARAM = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes a retry safe: the same key with the same body within 24 hours replays the first answer (with `Idempotent-Replay: true`). Keys are scoped to your organization and environment.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
}
const UNUSED_IDEMPOTENCY_KEY_PARAM = {
  ...IDEMPOTENCY_KEY_PARAM,
  description:
    'Accepted (1 to 255 characters) but unused: every call answers afresh, since what it returns is shown once.',
}

const COMMON_V1: ErrorCode[] = [
  'missing_credentials',
  'invalid_access_token',
  'ip_not_allowed',
  'environment_mismatch',
  'rate_limited',
  'request_header_too_large',
  'request_timeout',
  'internal_error',
]
const COMMON_OPERATOR: ErrorCode[] = [
  'missing_credentials',
  'invalid_access_token',
  'request_header_too_large',
  'request_timeout',
  'internal_error',
]
const WITH_BODY: ErrorCode[] = [
  'invalid_request_body',
  'missing_parameter',
  'invalid_parameter',
  'unknown_parameter',
  'request_too_large',
]
/** Only /v1 honours Idempotency-Key (the operator API does not). */
const WITH_IDEMPOTENCY_KEY: ErrorCode[] = [
  'idempotency_key_reuse',
  'idempotency_request_in_progress',
]
const WITH_QUERY: ErrorCode[] = ['invalid_parameter', 'unknown_parameter', 'expired_cursor']

const ErrorEnvelopeSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'doc_url', 'request_id'],
      properties: {
        type: {
          type: 'string',
          enum: [
            'invalid_request_error',
            'authentication_error',
            'permission_error',
            'validation_error',
            'rate_limit_error',
            'api_error',
          ],
        },
        code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) },
        message: { type: 'string' },
        param: { type: 'string' },
        doc_url: { type: 'string', format: 'uri' },
        request_id: { type: 'string', pattern: '^req_' },
        errors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['code', 'param', 'message'],
            properties: {
              code: { type: 'string' },
              param: { type: 'string' },
              message: { type: 'string' },
            },
          },
        },
      },
    },
  },
}

/** The token endpoint's refusals (RFC 6749 section 5.2), its codes as the route declares them: no `code`, no `doc_url`. */
function oauthErrorSchema(codes: Record<string, number>) {
  return {
    type: 'object',
    required: ['error', 'error_description'],
    properties: {
      error: { type: 'string', enum: Object.keys(codes) },
      error_description: { type: 'string' },
    },
  }
}
const NO_STORE_HEADERS = {
  'Cache-Control': {
    description: 'Always `no-store`: tokens and refusals are never cached.',
    schema: { type: 'string', const: 'no-store' },
  },
  Pragma: {
    description: '`no-cache`, for HTTP/1.0 caches.',
    schema: { type: 'string', const: 'no-cache' },
  },
}

/**
 * Responses of an operation answering in the OAuth shape: the success with no-store, each status with its codes,
 * and the `OAuthError` component they refer to.
 */
function oauthResponses(
  op: Record<string, any>,
  codes: Record<string, number>,
  schemas: Record<string, Schema>,
): void {
  schemas.OAuthError = oauthErrorSchema(codes)
  for (const [status, response] of Object.entries<Record<string, any>>(op.responses ?? {})) {
    if (status.startsWith('2'))
      response.headers = { ...NO_STORE_HEADERS, ...(response.headers ?? {}) }
    else delete op.responses[status]
  }
  const byStatus = new Map<number, string[]>()
  for (const [code, status] of Object.entries(codes))
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  for (const [status, list] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    op.responses[String(status)] = {
      description: `OAuth error codes (\`error\`): ${list.map((c) => `\`${c}\``).join(', ')}`,
      headers: NO_STORE_HEADERS,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } } },
    }
  }
}

type Schema = Record<string, unknown>

const CHILD_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const
const CHILD_ONE = ['items', 'not', 'additionalProperties', 'contains'] as const

/**
 * Moves every titled schema (`Cardholder`, `CardholderCreateRequest`, …) into `components.schemas` under its
 * title and refers to it with `$ref`, innermost first. Returns a new schema; the routes' own objects are
 * left untouched. A title already taken by a different schema stays inline rather than be overwritten.
 */
function hoistSchema(schema: unknown, components: Record<string, Schema>): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema
  const out: Schema = { ...(schema as Schema) }
  if (out.properties && typeof out.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Schema).map(([k, v]) => [k, hoistSchema(v, components)]),
    )
  }
  for (const key of CHILD_LISTS)
    if (Array.isArray(out[key]))
      out[key] = (out[key] as unknown[]).map((v) => hoistSchema(v, components))
  for (const key of CHILD_ONE)
    if (out[key] && typeof out[key] === 'object') out[key] = hoistSchema(out[key], components)
  const title = out.title
  if (typeof title !== 'string' || !/^[A-Za-z0-9._-]+$/.test(title)) return out
  delete out.$id
  const existing = components[title]
  if (existing && shape(existing) !== shape(out)) return out
  // The same schema, documented once with examples and once without: keep the richer one.
  if (!existing || (existing.examples === undefined && out.examples !== undefined))
    components[title] = out
  return { $ref: `#/components/schemas/${title}` }
}

/** A schema's structure, without its top-level prose and examples. */
function shape(schema: Schema): string {
  const { examples: _examples, description: _description, ...rest } = schema
  return JSON.stringify(rest)
}

function hoistOperationSchemas(op: Record<string, any>, components: Record<string, Schema>): void {
  for (const media of Object.values<Record<string, any>>(op.requestBody?.content ?? {})) {
    if (media.schema) media.schema = hoistSchema(media.schema, components)
  }
  for (const response of Object.values<Record<string, any>>(op.responses ?? {})) {
    for (const media of Object.values<Record<string, any>>(response?.content ?? {})) {
      if (media.schema) media.schema = hoistSchema(media.schema, components)
    }
  }
}

/**
 * @fastify/swagger calls every response a route declares without a description "Default Response"; a reader
 * learns more from the status's own name ("OK", "Created", "Service Unavailable").
 */
function describeResponses(op: Record<string, any>): void {
  for (const [status, response] of Object.entries<Record<string, any>>(op.responses ?? {})) {
    if (
      response &&
      (response.description === undefined || response.description === 'Default Response')
    ) {
      response.description = STATUS_CODES[Number(status)] ?? 'Response'
    }
  }
}

/** Only /v1 honours Idempotency-Key, on POST and PATCH, unless the route accepts it unused (`config.idempotent`). */
function usesIdempotencyKey(
  method: string,
  path: string,
  extra: OperationExtras | undefined,
): boolean {
  return (
    path.startsWith('/v1') &&
    (method === 'post' || method === 'patch') &&
    extra?.idempotent !== false
  )
}

/**
 * What a reader of the reference needs beyond the schemas: a request example on every body, curl and SDK samples on
 * every operation (`x-codeSamples`), and the tags in reading order after the introduction (getting a token).
 */
function decorateForReaders(
  doc: Record<string, any>,
  baseUrl: string,
  extras: Map<string, OperationExtras>,
): void {
  const schemas = doc.components.schemas as Record<string, Record<string, any>>
  const ctx: ExampleContext = { components: schemas, ids: documentIds(schemas) }
  const tags: string[] = []
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Record<string, any>>(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue
      tags.push(...(op.tags ?? []))
      addRequestExample(`${method.toUpperCase()} ${path}`, op, ctx)
      const usesKey = usesIdempotencyKey(method, path, extras.get(`${method} ${path}`))
      op['x-codeSamples'] = codeSamples({ method, path, op, ctx, usesKey })
    }
  }
  doc.tags = orderedTags(tags)
  doc.info = { ...doc.info, description: introduction(baseUrl) }
}

/** The document as served: serialized once, with its brotli and gzip twins and an ETag (it only changes with the code). */
interface ServedDocument {
  body: string
  br: Buffer
  gzip: Buffer
  etag: string
}

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

/** Compresses in libuv's thread pool (brotli at quality 9: 0.2 s on the document, where 11 takes a second for 8% less), off the event loop. */
async function serve(doc: unknown): Promise<ServedDocument> {
  const body = JSON.stringify(doc)
  const [br, gz] = await Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body),
      },
    }),
    gzipAsync(body, { level: 9 }),
  ])
  return {
    body,
    br,
    gzip: gz,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  }
}

function openapiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/** Registers the generated OpenAPI 3.1 document (served at /openapi.json): route schemas plus our extensions. */
export async function installOpenApi(app: FastifyInstance, baseUrl: string): Promise<void> {
  const extras = new Map<string, OperationExtras>()
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = (route.config ?? {}) as Record<string, unknown>
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      extras.set(`${method.toLowerCase()} ${openapiPath(route.url)}`, {
        capability: (config.capability as { name?: string } | undefined)?.name,
        scope: config.scope as string | undefined,
        simulator: config.simulator as boolean | undefined,
        errors: (config.errors as ErrorCode[] | undefined) ?? [],
        created: config.created as boolean | undefined,
        oauthErrors: config.oauthErrors as Record<string, number> | undefined,
        idempotent: config.idempotent as boolean | undefined,
      })
    }
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc: card issuing and eSIM API',
        version: '1.0.0',
        description: introduction(baseUrl),
      },
      servers: [{ url: baseUrl }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'Opaque access token from POST /oauth/token (at_test_ sandbox, at_live_ production).',
          },
          operator: {
            type: 'http',
            scheme: 'bearer',
            description: 'SVC_OPERATOR_TOKEN, for the platform operator only.',
          },
        },
      },
    },
    transformObject: (input) => {
      const doc = (input as { openapiObject: Record<string, any> }).openapiObject
      doc.components = doc.components ?? {}
      doc.components.schemas = { ...(doc.components.schemas ?? {}), Error: ErrorEnvelopeSchema }
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
        for (const [method, op] of Object.entries<Record<string, any>>(item)) {
          if (op && typeof op === 'object' && op.responses) {
            hoistOperationSchemas(op, doc.components.schemas)
            describeResponses(op)
          }
          const extra = extras.get(`${method} ${path}`)
          if (!extra) continue
          if (extra.oauthErrors) {
            oauthResponses(op, extra.oauthErrors, doc.components.schemas)
            continue
          }
          const isV1 = path.startsWith('/v1')
          const isOperator = path.startsWith('/operator/')
          if (extra.capability) op['x-svc-capability'] = extra.capability
          if (extra.scope) op['x-svc-scope'] = extra.scope
          if (extra.simulator) op['x-svc-sandbox-only'] = true
          if (isV1) op.security = [{ bearer: [] }]
          const takesKey = isV1 && (method === 'post' || method === 'patch')
          const usesKey = usesIdempotencyKey(method, path, extra)
          if (takesKey) {
            op.parameters = [
              ...(op.parameters ?? []).filter(
                (p: { name: string }) => p.name !== IDEMPOTENCY_KEY_PARAM.name,
              ),
              usesKey ? IDEMPOTENCY_KEY_PARAM : UNUSED_IDEMPOTENCY_KEY_PARAM,
            ]
          }
          if (extra.created && op.responses?.['200'] && !op.responses['201']) {
            op.responses['201'] = { ...op.responses['200'], description: 'Created' }
            delete op.responses['200']
          }
          if (isOperator) op.security = [{ operator: [] }]
          const codes = new Set<ErrorCode>(extra.errors)
          if (isV1 || isOperator) for (const c of isV1 ? COMMON_V1 : COMMON_OPERATOR) codes.add(c)
          if (method === 'post' || method === 'patch' || method === 'put')
            for (const c of WITH_BODY) codes.add(c)
          if (usesKey) for (const c of WITH_IDEMPOTENCY_KEY) codes.add(c)
          if (method === 'get' && op.parameters?.some((p: { in: string }) => p.in === 'query'))
            for (const c of WITH_QUERY) codes.add(c)
          if (isV1 && extra.scope) codes.add('insufficient_scope')
          if (extra.capability || extra.simulator || path.includes('{')) codes.add('not_found')
          op.responses = op.responses ?? {}
          for (const [status, response] of Object.entries<Record<string, any>>(op.responses)) {
            if (status.startsWith('2'))
              response.headers = {
                'Svc-Request-Id': REQUEST_ID_HEADER_REF,
                ...(response.headers ?? {}),
              }
          }
          const byStatus = new Map<number, ErrorCode[]>()
          for (const code of codes) {
            const status = ERROR_CATALOGUE[code].status
            byStatus.set(status, [...(byStatus.get(status) ?? []), code])
          }
          for (const [status, list] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
            op.responses[String(status)] = {
              description: `Error codes: ${list.map((c) => `\`${c}\``).join(', ')}`,
              headers: {
                'Svc-Request-Id': REQUEST_ID_HEADER_REF,
                ...(status === 429 ? { 'Retry-After': RETRY_AFTER_HEADER_REF } : {}),
              },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            }
          }
        }
      }
      simplifyDocumentSchemas(doc)
      compactDocument(doc)
      decorateForReaders(doc, baseUrl, extras)
      shareErrorResponses(doc)
      return doc as never
    },
  })
  let serving: Promise<ServedDocument> | undefined
  app.get(
    '/openapi.json',
    {
      config: { public: true },
      schema: {
        tags: ['Platform'],
        summary: 'This document: OpenAPI 3.1, every operation, schema and error code (no token)',
      },
    },
    async (req, reply) => {
      serving ??= serve(app.swagger())
      const served = await serving
      reply
        .type('application/json; charset=utf-8')
        .header('ETag', served.etag)
        .header('Cache-Control', 'no-cache')
        .header('Vary', 'Accept-Encoding')
      const known = String(req.headers['if-none-match'] ?? '').split(/\s*,\s*/)
      if (known.includes(served.etag)) return reply.code(304).send()
      const encoding = preferredEncoding(req.headers['accept-encoding'])
      if (encoding === 'br') return reply.header('Content-Encoding', 'br').send(served.br)
      if (encoding === 'gzip') return reply.header('Content-Encoding', 'gzip').send(served.gzip)
      return reply.send(served.body)
    },
  )
}
