import { sql, type RawBuilder } from 'kysely'
import { isUniqueViolation } from '../db/tx.js'
import { ApiError } from './errors.js'
import { currentIdempotentRequest } from './idempotency.js'

/** The unique index of stored idempotent answers: meeting it means another request stored this key's answer first. */
const IDEMPOTENCY_KEY_CONSTRAINT = 'idempotency_keys_pkey'

/** An Idempotency-Key whose answer a batched statement stores beside the effect, and the status it answers with. */
export interface AnswerToStore {
  key: string
  method: string
  path: string
  requestHash: string
  status: number
}

/** The answer the calling request (if sent with an Idempotency-Key) asks a batched statement to store. */
export function answerToStore(status: number): AnswerToStore | null {
  const request = currentIdempotentRequest()
  return request ? { key: request.key, method: request.method, path: request.path, requestHash: request.requestHash, status } : null
}

/** An item's answer fields, for a batch sent as JSON records (`ANSWER_RECORD_COLUMNS` reads them back). */
export function answerItemFields(answer: AnswerToStore | null) {
  return {
    idem_key: answer?.key ?? null, idem_method: answer?.method ?? null, idem_path: answer?.path ?? null,
    idem_hash: answer?.requestHash ?? null, idem_status: answer?.status ?? null,
  }
}

/** The record columns of `answerItemFields`, for `json_to_recordset(…) AS i(…, ${ANSWER_RECORD_COLUMNS})`. */
export const ANSWER_RECORD_COLUMNS = sql.raw('idem_key text, idem_method text, idem_path text, idem_hash text, idem_status int')

/**
 * The CTE `answered` that stores, beside the effect in the same statement, the answer of each row of
 * `source` that carries an Idempotency-Key: `source` has the answer fields and organization_id and
 * environment; `response` is the answer as a JSON expression over its rows.
 */
export function storeAnswersCte(source: string, response: RawBuilder<unknown>, now: Date): RawBuilder<unknown> {
  return sql`answered AS (
      INSERT INTO idempotency_keys (organization_id, environment, key, method, path, request_hash, response_status, response_json, created_at)
      SELECT organization_id, environment, idem_key, idem_method, idem_path, idem_hash, idem_status, ${response}, ${now}
      FROM ${sql.table(source)} WHERE idem_key IS NOT NULL
    )`
}

/** The error a batched path answers when its key's answer was stored first by another holder: the retry replays it. */
export function answerTakenError(err: unknown): ApiError | null {
  return isUniqueViolation(err, IDEMPOTENCY_KEY_CONSTRAINT) ? new ApiError('idempotency_request_in_progress') : null
}
