import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify'
import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import { purgeInBatches, type PurgeOptions } from '../db/purge.js'
import { isUniqueViolation, withTx } from '../db/tx.js'
import type { Db } from '../db/types.js'
import { openUnit, type UnitOfWork } from '../db/unit-of-work.js'
import { canonicalJson } from '../lib/canonical-json.js'
import { decryptField, encryptField, sha256Hex } from '../lib/crypto.js'
import { envelope, UnparsableBody } from './error-handler.js'
import { ApiError, ERROR_CATALOGUE } from './errors.js'
import { STORED_COLUMNS, type StoredAnswer } from './in-flight.js'
import type { AnswerKey, IdempotentRequest } from './request-unit.js'

export type { AnswerKey, IdempotentRequest } from './request-unit.js'

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000

/** A request running under its key: its answer's key, and its dependencies bound to its unit of work. */
interface HeldKey {
  key: AnswerKey
  lockId: string
  /** The request's dependencies (`unitOf`); null on an `in-statement` route, whose statement is its unit. */
  deps: AppDeps | null
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey?: HeldKey
  }
  interface FastifyContextConfig {
    /**
     * false: the route accepts Idempotency-Key but does not use it (each call must be fresh, e.g. pin-key).
     * 'in-statement': the route's only write is one statement that locks the key, reads its stored answer and
     * stores the new one itself (`keyInStatement`), so the request needs neither a lock round trip before it nor
     * a unit of work around it.
     */
    idempotent?: boolean | 'in-statement'
  }
}

/** Cached responses can hold secrets shown once (webhook secrets, PIN keys): they are stored encrypted. */
const RESPONSE_PURPOSE = 'idempotency-response'

/** The key of a request on an `in-statement` route, for its statement; undefined without a key (or elsewhere). */
export function keyInStatement(req: FastifyRequest): AnswerKey | undefined {
  const held = req.idempotencyKey
  return held?.key.inStatement ? held.key : undefined
}

/**
 * The dependencies a route hands its use case: for a request with an Idempotency-Key, the platform's bound to
 * the request's unit of work (`db` its handle, `unit` its key), whose effect commits with the stored answer;
 * otherwise the platform's, unchanged.
 */
export function unitOf(req: FastifyRequest, deps: AppDeps): AppDeps {
  return req.idempotencyKey?.deps ?? deps
}

/**
 * The platform's dependencies bound to a unit of work. On the embedded database (one connection) the simulated
 * processors and eSIM network keep their records through the unit's autonomous handle: while the unit holds the
 * connection, theirs could not be had.
 */
export function bindUnit(deps: AppDeps, work: UnitOfWork, key: AnswerKey): AppDeps {
  const bound: AppDeps = { ...deps, db: work.db, unit: { work, key } }
  if (work.autonomous !== deps.db) {
    bound.processors = deps.processors.onDatabase(work.autonomous)
    bound.esimNetwork = deps.esimNetwork.onDatabase(work.autonomous)
  }
  return bound
}

/** What names a key among processes (its in-process entry, its advisory lock): organization, environment and key. */
export function keyLockId(
  request: Pick<IdempotentRequest, 'organizationId' | 'environment' | 'key'>,
): string {
  return `${request.organizationId}\u0000${request.environment}\u0000${request.key}`
}

/** The key row of a request's answer: who asked what, and the status it was answered with. */
function answerRow(request: IdempotentRequest, status: number, now: Date) {
  return {
    organization_id: request.organizationId,
    environment: request.environment,
    key: request.key,
    method: request.method,
    path: request.path,
    request_hash: request.requestHash,
    response_status: status,
    created_at: now,
  }
}

/** Marks `reply` as the replay of a stored answer and returns that answer's body. */
function replayOf(reply: FastifyReply, row: StoredAnswer, masterKey: Buffer): string {
  reply
    .code(row.response_status)
    .header('Idempotent-Replay', 'true')
    .type('application/json; charset=utf-8')
  if (row.response_body !== null)
    return decryptField(masterKey, RESPONSE_PURPOSE, row.response_body)
  return row.response_json === null || row.response_json === undefined
    ? ''
    : typeof row.response_json === 'string'
      ? row.response_json
      : JSON.stringify(row.response_json)
}

/**
 * Whether an answer must not be stored: a failure on our side (5xx) or a refusal the catalogue marks
 * retryable (idempotency_request_in_progress for a busy client_transaction_id, esim_inventory_exhausted).
 * The identical retry with the same key has to be able to succeed, so the request leaves no trace.
 */
function retryableAnswer(status: number, body: string): boolean {
  if (status >= 500) return true
  if (status < 400) return false
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } } | null)?.error?.code
    return (
      typeof code === 'string' &&
      Object.hasOwn(ERROR_CATALOGUE, code) &&
      ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].retryable
    )
  } catch {
    return false
  }
}

type KeyRef = Pick<IdempotentRequest, 'organizationId' | 'environment' | 'key'>

async function findAnswer(db: Db, r: KeyRef): Promise<StoredAnswer | undefined> {
  const { rows } = await sql<StoredAnswer>`
    SELECT ${sql.raw(STORED_COLUMNS)}
    FROM idempotency_keys AS ik WHERE organization_id = ${r.organizationId} AND environment = ${r.environment} AND key = ${r.key}`.execute(
    db,
  )
  return rows[0]
}

/** Whether a stored answer is within the replay window; an older one counts as no answer (the key is new again). */
export function answerFresh(deps: Pick<AppDeps, 'clock'>, row: StoredAnswer): boolean {
  return deps.clock.now().getTime() - row.created_at.getTime() <= IDEMPOTENCY_WINDOW_MS
}

/** Removes an answer past the window, so that the new one can be written under the same key. */
export async function forgetAnswer(db: Db, r: KeyRef, row: StoredAnswer): Promise<void> {
  await sql`DELETE FROM idempotency_keys
    WHERE organization_id = ${r.organizationId} AND environment = ${r.environment} AND key = ${r.key}
      AND created_at = ${row.created_at}`.execute(db)
}

/**
 * The body of the stored answer for the identical request (status and headers set on `reply`), or the refusal
 * for a different one under the same key.
 */
function storedAnswerBody(
  reply: FastifyReply,
  row: StoredAnswer,
  request: IdempotentRequest,
  key: Buffer,
): string {
  if (
    row.method !== request.method ||
    row.path !== request.path ||
    row.request_hash !== request.requestHash
  ) {
    refuseReuse(row.method === request.method && row.path === request.path)
  }
  return replayOf(reply, row, key)
}

/**
 * An `in-statement` route's statement found a fresh answer stored under the request's key: the request is
 * answered with it (the replay, its body returned and status set on `reply`), or refused as a reuse of the key.
 * Either way nothing more is stored.
 */
export function replayStoredAnswer(
  deps: Pick<AppDeps, 'config'>,
  key: AnswerKey,
  reply: FastifyReply,
  row: StoredAnswer,
): string {
  key.answered = true
  return storedAnswerBody(reply, row, key.request, deps.config.masterKey)
}

function refuseReuse(sameEndpoint: boolean): never {
  throw new ApiError('idempotency_key_reuse', {
    message: sameEndpoint
      ? 'This Idempotency-Key was already used with a different request body.'
      : 'This Idempotency-Key was already used on a different endpoint.',
  })
}

function fingerprint(request: IdempotentRequest): string {
  return `${request.method} ${request.path} ${request.requestHash}`
}

/** The key is held by a running request (`holder`: its fingerprint in this process, '' on another node). */
function refuseHeld(holder: string, request: IdempotentRequest): never {
  if (holder !== '' && holder !== fingerprint(request)) {
    refuseReuse(holder.startsWith(`${request.method} ${request.path} `))
  }
  throw new ApiError('idempotency_request_in_progress')
}

/**
 * Idempotency-Key on every /v1 POST and PATCH, per the interface's table, exactly once under failure:
 *
 * - While a request runs, its key is held by a lock that dies with the process (`InFlightKeys`): a duplicate
 *   answers 409 idempotency_request_in_progress, and after a crash the retry proceeds at once.
 * - The answer is stored in the same transaction as the effect it answers. The request's route hands its use
 *   case the request's unit of work (`unitOf`, `db/unit-of-work.ts`), committed here together with the row of
 *   its answer; the batched paths write the row in the effect's own statement (`unit.key`). A crash or a failed
 *   write leaves both or neither.
 * - A retryable answer (5xx, or a refusal the catalogue marks retryable) rolls the request's writes back and
 *   stores nothing: the identical retry runs again.
 */
export function installIdempotency(app: FastifyInstance, deps: AppDeps): void {
  const inFlight = deps.inFlight
  app.decorateRequest('idempotencyKey', undefined)

  /** The Idempotency-Key a request is to run under: POST and PATCH on /v1, unless the route does not use it. */
  function keyOf(req: FastifyRequest): string | string[] | undefined {
    if (req.method !== 'POST' && req.method !== 'PATCH') return undefined
    if (!req.ctx || req.routeOptions.config.idempotent === false) return undefined
    return req.headers['idempotency-key']
  }

  /** Takes the key, or answers from what is stored; returns the key held for the rest of the request. */
  async function take(
    req: FastifyRequest,
    reply: FastifyReply,
    raw: string | string[],
  ): Promise<HeldKey | null> {
    const key = Array.isArray(raw) ? raw[0] : raw
    if (key.length === 0 || key.length > 255) {
      throw new ApiError('invalid_parameter', {
        param: 'Idempotency-Key',
        message: 'Idempotency-Key must be 1 to 255 characters.',
      })
    }
    // A body the parser refused is identified by its raw bytes: the identical retry replays the refusal.
    const requestHash =
      req.body instanceof UnparsableBody
        ? req.body.hash
        : sha256Hex(canonicalJson({ body: req.body ?? {} }))
    const { organizationId, environment } = req.ctx
    const request: IdempotentRequest = {
      organizationId,
      environment,
      key,
      method: req.method,
      path: req.url.split('?')[0],
      requestHash,
    }
    const lockId = keyLockId(request)

    if (req.routeOptions.config.idempotent === 'in-statement') {
      // The route's statement locks the key and reads its answer: here only this process's duplicates are told apart.
      const holder = inFlight.holdLocally(lockId, fingerprint(request))
      if (holder !== null) refuseHeld(holder, request)
      return { key: { request, inStatement: true, answered: false }, lockId, deps: null }
    }
    const { holder, stored } = await inFlight.acquire(lockId, fingerprint(request), request)
    try {
      // On PostgreSQL the lock's statement read the stored answer too; otherwise read it now.
      const row = stored === undefined ? await findAnswer(deps.db, request) : (stored ?? undefined)
      if (row && answerFresh(deps, row)) {
        // Answered already (a retry, or one racing the original's last step): that answer is the answer.
        if (holder === null) inFlight.release(lockId)
        reply.send(storedAnswerBody(reply, row, request, deps.config.masterKey))
        return null
      }
      if (holder !== null) refuseHeld(holder, request)
      // Older than the window counts as new: the old answer makes way (the new one is written under the same key).
      if (row) await forgetAnswer(deps.db, request, row)
    } catch (err) {
      if (holder === null) inFlight.release(lockId)
      throw err
    }
    const answerKey: AnswerKey = { request, inStatement: false, answered: false }
    return { key: answerKey, lockId, deps: bindUnit(deps, openUnit(deps.db), answerKey) }
  }

  // A callback hook: requests without a key (most) pass every hook here without a promise.
  app.addHook(
    'preValidation',
    (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const raw = keyOf(req)
      if (raw === undefined) return done()
      take(req, reply, raw).then(
        (held) => {
          if (reply.sent) return
          if (held) req.idempotencyKey = held
          done()
        },
        (err) => done(err),
      )
    },
  )

  type SendDone = (err: Error | null, payload?: unknown) => void
  app.addHook(
    'onSend',
    (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: SendDone) => {
      const held = req.idempotencyKey
      if (!held) return done(null, payload)
      req.idempotencyKey = undefined
      store(held, reply, payload)
        .finally(() => inFlight.release(held.lockId))
        .then(
          (sent) => done(null, sent),
          (err) => done(err),
        )
    },
  )

  // Safety net: a request that ends without onSend (never expected) neither keeps its key nor its transaction.
  app.addHook(
    'onResponse',
    (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const held = req.idempotencyKey
      if (!held) return done()
      req.idempotencyKey = undefined
      const rolledBack = held.deps?.unit?.work.rollback() ?? Promise.resolve()
      rolledBack.finally(() => inFlight.release(held.lockId)).then(() => done(), done)
    },
  )

  /** Commits the request's writes with its answer, or rolls them back for a retryable answer. */
  async function store(held: HeldKey, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const body =
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : ''
    const { key } = held
    const work = held.deps?.unit?.work ?? null
    if (retryableAnswer(reply.statusCode, body) || key.answered) {
      // Retryable: nothing of the request remains. Answered: the batched statement committed effect and answer already.
      await work?.rollback()
      return payload
    }
    try {
      if (key.inStatement) {
        // The route's statement did not run (or refused): the key's stored answer was not read yet.
        const stored = await findAnswer(deps.db, key.request)
        if (stored && answerFresh(deps, stored)) {
          return storedAnswerBody(reply, stored, key.request, deps.config.masterKey)
        }
        if (stored) await forgetAnswer(deps.db, key.request, stored)
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      // A different request under this key: its refusal is the answer, and nothing is stored.
      reply.code(err.status).type('application/json; charset=utf-8')
      return JSON.stringify(envelope(err, String(reply.request.id), deps.config.baseUrl))
    }
    const sealed = encryptField(deps.config.masterKey, RESPONSE_PURPOSE, body)
    const row = {
      ...answerRow(key.request, reply.statusCode, deps.clock.now()),
      response_body: sealed,
    }
    try {
      // The answer joins the unit's transaction and both commit together (alone when the request wrote nothing).
      const insert = (db: Db) => db.insertInto('idempotency_keys').values(row).execute()
      await (work ? work.commit(insert) : insert(deps.db))
      return payload
    } catch (err) {
      await work?.rollback()
      if (isUniqueViolation(err)) {
        // Another holder (a lost lock) stored its answer first: ours was rolled back, theirs is the answer.
        const stored = await findAnswer(deps.db, key.request).catch(() => undefined)
        if (stored && stored.request_hash === key.request.requestHash)
          return replayOf(reply, stored, deps.config.masterKey)
      }
      reply.log.error({ err }, 'storing the idempotent answer failed; the request was rolled back')
      const failure = new ApiError('internal_error', {
        message:
          'The request could not be completed and was rolled back; retry with the same Idempotency-Key.',
      })
      reply.code(failure.status).type('application/json; charset=utf-8')
      reply.removeHeader('Idempotent-Replay')
      return JSON.stringify(envelope(failure, String(reply.request.id), deps.config.baseUrl))
    }
  }
}

/**
 * Removes answers past the replay window (scheduled housekeeping), in short batches found through
 * `idempotency_keys_created`; answers how many. A key past the window is never replayed anyway (`fresh` above).
 */
export async function purgeIdempotencyKeys(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - IDEMPOTENCY_WINDOW_MS)
  return purgeInBatches(deps.db, {
    ...options,
    table: 'idempotency_keys',
    orderBy: 'created_at',
    where: sql`created_at < ${cutoff}`,
  })
}

/** What `runIdempotent` answers: the status and JSON body (an object, or the error envelope), and whether it is a stored answer replayed. */
export interface IdempotentOutcome {
  status: number
  body: string
  replay: boolean
}

/**
 * The Idempotency-Key guarantee for a caller that is not an HTTP request: the console's forms, whose hidden
 * one-time key names the effect. `request` is the /v1 call the form stands for (method, path, JSON body), keyed
 * in the same table as API keys: the same key with the same call answers the stored answer and changes nothing;
 * with another call it is idempotency_key_reuse; while the first is running, idempotency_request_in_progress.
 * `run` performs the call with the dependencies of its unit of work, which commits with the answer (batched
 * paths store the answer in their own statement, as for /v1). An ApiError it throws is the answer (stored unless
 * retryable); anything else rolls back and is rethrown. `after` writes through `db`: the unit's transaction when
 * `run` succeeded and the answer was not already committed by a batched statement, else the pool (alone).
 */
export async function runIdempotent(
  deps: AppDeps,
  call: {
    organizationId: string
    environment: string
    key: string
    method: string
    path: string
    body: unknown
    requestId: string
  },
  run: (unit: AppDeps) => Promise<{ status: number; body: unknown }>,
  after?: (body: unknown, db: Db) => Promise<void>,
): Promise<IdempotentOutcome> {
  if (call.key.length === 0 || call.key.length > 255) {
    throw new ApiError('invalid_parameter', {
      param: 'Idempotency-Key',
      message: 'Idempotency-Key must be 1 to 255 characters.',
    })
  }
  const request: IdempotentRequest = {
    organizationId: call.organizationId,
    environment: call.environment,
    key: call.key,
    method: call.method,
    path: call.path,
    requestHash: sha256Hex(canonicalJson({ body: call.body ?? {} })),
  }
  const lockId = keyLockId(request)
  const { holder, stored } = await deps.inFlight.acquire(lockId, fingerprint(request), request)
  try {
    const row = stored === undefined ? await findAnswer(deps.db, request) : (stored ?? undefined)
    if (row && answerFresh(deps, row)) {
      if (
        row.method !== request.method ||
        row.path !== request.path ||
        row.request_hash !== request.requestHash
      ) {
        refuseReuse(row.method === request.method && row.path === request.path)
      }
      const body =
        row.response_body !== null
          ? decryptField(deps.config.masterKey, RESPONSE_PURPOSE, row.response_body)
          : typeof row.response_json === 'string'
            ? row.response_json
            : JSON.stringify(row.response_json ?? null)
      return { status: row.response_status, body, replay: true }
    }
    if (holder !== null) refuseHeld(holder, request)
    if (row) await forgetAnswer(deps.db, request, row)
  } catch (err) {
    if (holder === null) deps.inFlight.release(lockId)
    throw err
  }
  const key: AnswerKey = { request, inStatement: false, answered: false }
  const work = openUnit(deps.db)
  try {
    let status: number
    let body: string
    let succeeded: unknown
    try {
      const result = await run(bindUnit(deps, work, key))
      status = result.status
      body = JSON.stringify(result.body)
      succeeded = result.body
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err
      status = err.status
      body = JSON.stringify(envelope(err, call.requestId, deps.config.baseUrl))
    }
    if (key.answered) {
      await work.rollback()
      if (succeeded !== undefined && after) await after(succeeded, deps.db)
      return { status, body, replay: false }
    }
    if (retryableAnswer(status, body)) {
      await work.rollback()
      return { status, body, replay: false }
    }
    const sealed = encryptField(deps.config.masterKey, RESPONSE_PURPOSE, body)
    const answer = { ...answerRow(request, status, deps.clock.now()), response_body: sealed }
    await work.commit((db) =>
      withTx(db, async (trx) => {
        if (succeeded !== undefined && after) await after(succeeded, trx)
        await trx.insertInto('idempotency_keys').values(answer).execute()
      }),
    )
    return { status, body, replay: false }
  } catch (err) {
    await work.rollback()
    throw err
  } finally {
    deps.inFlight.release(lockId)
  }
}
