import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import { canonicalJson } from '../lib/canonical-json.js'
import { decryptField, encryptField, sha256Hex } from '../lib/crypto.js'
import { UnparsableBody } from './error-handler.js'
import { ApiError, ERROR_CATALOGUE } from './errors.js'

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000
/** How long a request may hold its key before another node may take over (a crashed node never answers). */
const LOCK_MS = 120 * 1000

interface KeyRow {
  method: string
  path: string
  request_hash: string
  state: string
  response_status: number | null
  response_body: string | null
  locked_until: Date
  created_at: Date
}

interface HeldKey { organizationId: string; environment: string; key: string }

declare module 'fastify' {
  interface FastifyRequest { idempotencyKey?: HeldKey }
  interface FastifyContextConfig {
    /** false: the route accepts Idempotency-Key but does not use it (each call must be fresh, e.g. pin-key). */
    idempotent?: boolean
  }
}

/** Cached responses can hold secrets shown once (webhook secrets, PIN keys): they are stored encrypted. */
const RESPONSE_PURPOSE = 'idempotency-response'

function replay(reply: FastifyReply, row: KeyRow, masterKey: Buffer): FastifyReply {
  return reply
    .code(row.response_status ?? 200)
    .header('Idempotent-Replay', 'true')
    .type('application/json; charset=utf-8')
    .send(row.response_body ? decryptField(masterKey, RESPONSE_PURPOSE, row.response_body) : '')
}

/**
 * Whether an answer must not be cached: a failure on our side (5xx) or a refusal the catalogue marks
 * retryable (idempotency_request_in_progress for a busy client_transaction_id, esim_inventory_exhausted).
 * The identical retry with the same key has to be able to succeed, so the key is released instead.
 */
function retryableAnswer(status: number, body: string): boolean {
  if (status >= 500) return true
  if (status < 400) return false
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } } | null)?.error?.code
    return typeof code === 'string' && Object.hasOwn(ERROR_CATALOGUE, code) && ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].retryable
  } catch {
    return false
  }
}

/**
 * Idempotency-Key on every /v1 POST and PATCH, per the interface's table. The database decides races:
 * the first INSERT of (organization, environment, key) wins, every other node sees the row.
 */
export function installIdempotency(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('idempotencyKey', undefined)

  app.addHook('preValidation', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'POST' && req.method !== 'PATCH') return
    if (!req.ctx || req.routeOptions.config.idempotent === false) return
    const raw = req.headers['idempotency-key']
    if (raw === undefined) return
    const key = Array.isArray(raw) ? raw[0] : raw
    if (key.length === 0 || key.length > 255) {
      throw new ApiError('invalid_parameter', { param: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 characters.' })
    }
    const path = req.url.split('?')[0]
    // A body the parser refused is identified by its raw bytes: the identical retry replays the refusal.
    const hash = req.body instanceof UnparsableBody ? req.body.hash : sha256Hex(canonicalJson({ body: req.body ?? {} }))
    const now = deps.clock.now()
    const lockedUntil = new Date(now.getTime() + LOCK_MS)
    const { organizationId, environment } = req.ctx
    const held: HeldKey = { organizationId, environment, key }

    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await sql<{ key: string }>`
        INSERT INTO idempotency_keys (organization_id, environment, key, method, path, request_hash, state, locked_until, created_at)
        VALUES (${organizationId}, ${environment}, ${key}, ${req.method}, ${path}, ${hash}, 'in_progress', ${lockedUntil}, ${now})
        ON CONFLICT DO NOTHING RETURNING key`.execute(deps.db)
      if (inserted.rows.length === 1) { req.idempotencyKey = held; return }

      const { rows } = await sql<KeyRow>`
        SELECT method, path, request_hash, state, response_status, response_body, locked_until, created_at
        FROM idempotency_keys WHERE organization_id = ${organizationId} AND environment = ${environment} AND key = ${key}`.execute(deps.db)
      const row = rows[0]
      if (!row) continue // deleted between our insert and select: try again
      const expired = now.getTime() - row.created_at.getTime() > IDEMPOTENCY_WINDOW_MS
      const sameRequest = row.method === req.method && row.path === path && row.request_hash === hash
      const abandoned = row.state === 'in_progress' && row.locked_until.getTime() < now.getTime() && sameRequest
      if (expired || abandoned) {
        // Take the key over: older than the window counts as new; a crashed holder's lock has lapsed.
        const taken = await sql<{ key: string }>`
          UPDATE idempotency_keys SET method = ${req.method}, path = ${path}, request_hash = ${hash}, state = 'in_progress',
            response_status = NULL, response_body = NULL, locked_until = ${lockedUntil}, created_at = ${now}
          WHERE organization_id = ${organizationId} AND environment = ${environment} AND key = ${key}
            AND created_at = ${row.created_at} AND locked_until = ${row.locked_until}
          RETURNING key`.execute(deps.db)
        if (taken.rows.length === 1) { req.idempotencyKey = held; return }
        continue
      }
      if (!sameRequest) {
        throw new ApiError('idempotency_key_reuse', {
          message: row.method === req.method && row.path === path
            ? 'This Idempotency-Key was already used with a different request body.'
            : 'This Idempotency-Key was already used on a different endpoint.',
        })
      }
      if (row.state === 'in_progress') throw new ApiError('idempotency_request_in_progress')
      return replay(reply, row, deps.config.masterKey)
    }
    throw new ApiError('idempotency_request_in_progress')
  })

  app.addHook('onSend', async (req, reply, payload) => {
    const held = req.idempotencyKey
    if (!held) return payload
    req.idempotencyKey = undefined
    const where = sql`organization_id = ${held.organizationId} AND environment = ${held.environment} AND key = ${held.key}`
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : ''
    if (retryableAnswer(reply.statusCode, body)) {
      // A retryable answer is not the outcome of the request: release the key so the retry runs again.
      await sql`DELETE FROM idempotency_keys WHERE ${where}`.execute(deps.db)
    } else {
      const sealed = encryptField(deps.config.masterKey, RESPONSE_PURPOSE, body)
      await sql`UPDATE idempotency_keys SET state = 'complete', response_status = ${reply.statusCode}, response_body = ${sealed}
        WHERE ${where}`.execute(deps.db)
    }
    return payload
  })
}

/** Removes keys past the replay window (scheduled housekeeping), including those a crashed node left in progress. */
export async function purgeIdempotencyKeys(deps: AppDeps): Promise<number> {
  const now = deps.clock.now()
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)
  const result = await sql`DELETE FROM idempotency_keys
    WHERE created_at < ${cutoff} AND (state = 'complete' OR locked_until < ${now})`.execute(deps.db)
  return Number(result.numAffectedRows ?? 0)
}
