import type { Db } from '../db/types.js'
import type { UnitOfWork } from '../db/unit-of-work.js'

/** The request an Idempotency-Key names: the row its answer is stored in is keyed by the first three. */
export interface IdempotentRequest {
  organizationId: string
  environment: string
  key: string
  method: string
  path: string
  requestHash: string
}

/**
 * The Idempotency-Key of a request, as data for a path that stores the request's answer in the statement of its
 * effect (a batch): it sets `answered`, and nothing more is stored when the request ends.
 * `inStatement`: the route is marked `idempotent: 'in-statement'`; the statement itself also takes the key's
 * advisory lock and reads the answer stored under it. Otherwise the request already holds the key.
 */
export interface AnswerKey {
  request: IdempotentRequest
  inStatement: boolean
  answered: boolean
}

/**
 * What a request's dependencies carry besides the platform's (`unitOf`): its unit of work (its `db` is the
 * dependencies' `db`) and its Idempotency-Key, for a batched path that stores the answer with its effect.
 */
export interface RequestUnit {
  work: UnitOfWork
  key: AnswerKey
}

/**
 * The handle for writes that commit at once whatever the request answers (the intent of a call to another
 * system): the unit's autonomous handle inside a request's unit of work, else `db` itself.
 */
export function autonomousDb(deps: { db: Db; unit?: RequestUnit }): Db {
  return deps.unit?.work.autonomous ?? deps.db
}
