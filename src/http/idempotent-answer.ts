import { sql, type RawBuilder } from 'kysely'
import { isUniqueViolation } from '../db/tx.js'
import { ApiError } from './errors.js'
import { keyLockId } from './idempotency.js'
import { lockKey, STORED_COLUMNS, type StoredAnswer } from './in-flight.js'
import type { AnswerKey } from './request-unit.js'

/** The unique index of stored idempotent answers: meeting it means another request stored this key's answer first. */
const IDEMPOTENCY_KEY_CONSTRAINT = 'idempotency_keys_pkey'

/** An Idempotency-Key whose answer a batched statement stores beside the effect, and the status it answers with. */
export interface AnswerToStore {
  key: string
  method: string
  path: string
  requestHash: string
  status: number
  /**
   * The key's advisory lock (a bigint's text) when the statement itself must take it and read the answer stored
   * under the key (an `in-statement` route); null when the request already holds the key (`InFlightKeys`).
   */
  lock: string | null
}

/**
 * The answer a batched statement is to store for a request sent with an Idempotency-Key (`key`; null without
 * one): on an `in-statement` route the statement takes the key's lock and reads its stored answer too.
 */
export function answerToStore(status: number, key: AnswerKey | undefined): AnswerToStore | null {
  if (!key) return null
  const { request } = key
  const lock = key.inStatement ? lockKey(keyLockId(request)) : null
  const { key: name, method, path, requestHash } = request
  return { key: name, method, path, requestHash, status, lock }
}

/** An item's answer fields, for a batch sent as JSON records (`ANSWER_RECORD_COLUMNS` reads them back). */
export function answerItemFields(answer: AnswerToStore | null) {
  return {
    idem_key: answer?.key ?? null,
    idem_method: answer?.method ?? null,
    idem_path: answer?.path ?? null,
    idem_hash: answer?.requestHash ?? null,
    idem_status: answer?.status ?? null,
    idem_lock: answer?.lock ?? null,
  }
}

/** The record columns of `answerItemFields`, for `json_to_recordset(…) AS i(…, ${ANSWER_RECORD_COLUMNS})`. */
export const ANSWER_RECORD_COLUMNS = sql.raw(
  'idem_key text, idem_method text, idem_path text, idem_hash text, idem_status int, idem_lock bigint',
)

/**
 * For a statement whose items may lock their key themselves (`lock`): the CTE `key_locks` (idx, ok) takes each such
 * item's advisory lock for the statement's transaction (ok false: the key is held elsewhere), and `key_stored`
 * the answer already stored under it (idx and `STORED_COLUMNS`). `source` has idx, org, env and the answer fields.
 * The lookup is a probe of the key's index per item: a LATERAL subquery with LIMIT, which the planner cannot turn
 * back into a join. As a join, the generic plan a pooled connection keeps chose to hash the whole table on every
 * statement once it held a few thousand keys (PostgreSQL's CPU per keyed credit more than doubled).
 */
export function keyLookupCtes(source: string): RawBuilder<unknown> {
  return sql`key_locks AS MATERIALIZED (
      SELECT idx, CASE WHEN idem_lock IS NULL THEN true ELSE pg_try_advisory_xact_lock(idem_lock) END AS ok
      FROM ${sql.table(source)}
    ),
    key_stored AS MATERIALIZED (
      SELECT s.idx, ik.* FROM ${sql.table(source)} AS s CROSS JOIN LATERAL (
        SELECT ${sql.raw(STORED_COLUMNS)} FROM idempotency_keys AS ik
        WHERE ik.organization_id = s.org AND ik.environment = s.env AND ik.key = s.idem_key
        LIMIT 1
      ) AS ik
      WHERE s.idem_lock IS NOT NULL
    )`
}

/** The final SELECT's column `stored`: the answer `key_stored` (alias `ks`) found for the item, as JSON (`storedOf`). */
export const STORED_RESULT = sql.raw(
  'CASE WHEN ks.idx IS NULL THEN NULL ELSE to_json(ks) END AS stored',
)

/** The answer an item's statement found stored under its key (`STORED_RESULT`), or null. */
export function storedOf(stored: unknown): StoredAnswer | null {
  if (stored === null || stored === undefined) return null
  const row = (typeof stored === 'string' ? JSON.parse(stored) : stored) as StoredAnswer & {
    created_at: string
  }
  return { ...row, created_at: new Date(row.created_at) }
}

/**
 * The CTE `answered` that stores, beside the effect in the same statement, the answer of each row of
 * `source` that carries an Idempotency-Key: `source` has the answer fields and organization_id and
 * environment; `response` is the answer as a JSON expression over its rows.
 */
export function storeAnswersCte(
  source: string,
  response: RawBuilder<unknown>,
  now: Date,
): RawBuilder<unknown> {
  return sql`answered AS (
      INSERT INTO idempotency_keys (organization_id, environment, key, method, path, request_hash, response_status, response_json, created_at)
      SELECT organization_id, environment, idem_key, idem_method, idem_path, idem_hash, idem_status, ${response}, ${now}
      FROM ${sql.table(source)} WHERE idem_key IS NOT NULL
    )`
}

/** The error a batched path answers when its key's answer was stored first by another holder: the retry replays it. */
export function answerTakenError(err: unknown): ApiError | null {
  return isUniqueViolation(err, IDEMPOTENCY_KEY_CONSTRAINT)
    ? new ApiError('idempotency_request_in_progress')
    : null
}
