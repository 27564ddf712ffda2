import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { isApiError } from '../../http/errors.js'
import { autonomousDb } from '../../http/request-unit.js'
import { newId } from '../../lib/ids.js'
import * as repo from './repo.js'

/**
 * The operations behind the cards:secrets scope, as named in the audit trail. `details.view` is a view of a hosted
 * card details page: it has no token of its own and is recorded under the client that created the session.
 */
export type SecretOperation =
  | 'pin_key.create'
  | 'pin.set'
  | 'pin.verify'
  | 'details.reveal'
  | 'reveal_session.create'
  | 'details.view'

/**
 * Runs one cards:secrets use under audit: the record (who, when, which card, which operation) is written
 * before anything happens, so no use goes unrecorded, and its outcome (`succeeded` or the error code)
 * afterwards, both committed at once whatever the request answers (the unit's autonomous handle). Secret
 * values never enter the record.
 */
export async function audited<T>(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  operation: SecretOperation,
  fn: () => Promise<T>,
): Promise<T> {
  const id = await recordSecretUse(deps, ctx, cardId, operation, 'started')
  let outcome = 'internal_error'
  try {
    const result = await fn()
    outcome = 'succeeded'
    return result
  } catch (err) {
    if (isApiError(err)) outcome = err.code
    throw err
  } finally {
    await repo
      .setAuditOutcome(autonomousDb(deps), id, outcome)
      .catch((err) =>
        deps.log.error({ err, audit_id: id }, 'card secret audit outcome not recorded'),
      )
  }
}

/**
 * Writes one audit record at once (committed whatever the request answers) and answers its id: `audited` writes
 * `started` and completes it; a use refused before it could start (a hosted page opened twice, too late or in the
 * wrong place) is written with its outcome directly.
 */
export async function recordSecretUse(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  operation: SecretOperation,
  outcome: string,
): Promise<string> {
  const id = newId('aud')
  await repo.insertAudit(autonomousDb(deps), {
    id,
    organization_id: ctx.organizationId,
    environment: ctx.environment,
    client_id: ctx.clientId,
    card_id: cardId.slice(0, 200),
    operation,
    outcome,
    request_id: ctx.requestId,
    created_at: deps.clock.now(),
  })
  return id
}
