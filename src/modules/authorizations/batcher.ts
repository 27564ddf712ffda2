import type { AppDeps } from '../../app-deps.js'
import { GroupCommit, type Waiting } from '../../db/group-commit.js'
import { answerTakenError } from '../../http/idempotent-answer.js'
import type { RequestCtx } from '../../http/context.js'
import {
  decideBatch,
  decideLocked,
  decideOnClock,
  precheck,
  presentRequest,
  type DecisionOutcome,
  type PresentedAuthorization,
} from './engine.js'
import { askIntegrator, endpointFor } from './integrator.js'
import type { AuthorizationView, SimulateAuthorizationBody } from './schemas.js'
import { moduleState } from '../module.js'

/** Most decisions one statement writes. */
const MAX_BATCH = 64
/** Batches a decision joins before it queues on its account's row lock instead (an account contended across processes). */
const OPTIMISTIC_ATTEMPTS = 3

interface Request {
  presented: PresentedAuthorization
  attempts: number
}
type WaitingDecision = Waiting<Request, AuthorizationView>

/**
 * Group commit for authorization decisions (`GroupCommit`): the new authorizations that wait together are
 * decided together (`decideBatch`: one read of their cards and accounts, one statement and one commit for all
 * their holds, authorizations and events), each on its own terms. A process runs one batch at a time (one
 * slot): the next one forms while it runs, so a process decides in arrival order, a batch never races the one
 * before it, and under load batches grow instead of statements multiplying (measured against two slots: more
 * decisions per second and a lower tail, `docs/decisions/authorization-group-commit.md`). An account another
 * process changed between the read and the write sends its decisions round again, first in the next batch;
 * after a few rounds one goes under the account's row lock.
 */
export class DecisionBatcher {
  private readonly group: GroupCommit<Request, AuthorizationView>

  constructor(private readonly deps: AppDeps) {
    this.group = new GroupCommit({
      slots: 1,
      maxBatch: MAX_BATCH,
      run: (batch, again) => this.run(batch, again),
    })
  }

  decide(presented: PresentedAuthorization): Promise<AuthorizationView> {
    return this.group.submit({ presented, attempts: 0 })
  }

  private async run(
    batch: WaitingDecision[],
    again: (requests: WaitingDecision[]) => void,
  ): Promise<void> {
    let outcomes: DecisionOutcome[]
    try {
      outcomes = await decideBatch(
        this.deps,
        this.deps.db,
        batch.map((w) => w.input.presented),
        false,
      )
    } catch (err) {
      if (batch.length === 1) throw err
      // The statement failed and wrote nothing: each decides alone, in order, so only the offending one fails.
      outcomes = []
      for (const w of batch) {
        outcomes.push(
          await decideBatch(this.deps, this.deps.db, [w.input.presented], false).then(
            ([o]) => o,
            (error: unknown) => ({ error }),
          ),
        )
      }
    }
    const retry: WaitingDecision[] = []
    batch.forEach((w, i) => {
      const outcome = outcomes[i]
      if ('error' in outcome) return w.reject(outcome.error)
      if ('view' in outcome) return w.resolve(outcome.view)
      // A card under a sandbox clock: decided alone on the clock's time (never for an organization without clocks).
      if ('clock' in outcome)
        return void decideOnClock(this.deps, w.input.presented, outcome.clock).then(
          w.resolve,
          w.reject,
        )
      if (++w.input.attempts < OPTIMISTIC_ATTEMPTS) retry.push(w)
      else decideLocked(this.deps, w.input.presented).then(w.resolve, w.reject)
    })
    again(retry)
  }
}

/** The process's decision batcher for its database (one slot: batches run in arrival order). */
export const DECISIONS = moduleState(
  'authorizations.decisions',
  (deps) => new DecisionBatcher(deps),
)

/**
 * Decides a new authorization, as the network presents it: the rules of `decide`, then (approved) a hold on
 * the account for the amount; a decline is recorded too, with its reason. Answered once it is committed.
 * When the organization has an authorization endpoint and the rules would approve, the endpoint is asked first,
 * outside any transaction and outside the batch (a slow endpoint delays only its own requests); the batch then
 * writes its answer with the balance checked again. Without an endpoint this is one cached lookup more.
 */
export async function authorize(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SimulateAuthorizationBody,
): Promise<AuthorizationView> {
  const presented = await presentRequest(deps, ctx, body)
  const logged = await askIntegratorFor(deps, ctx, presented)
  try {
    const view = await deps.state.of(DECISIONS).decide(presented)
    // The batch stored the request's answer with the decision: nothing is left to store when it ends.
    if (presented.answer && deps.unit) deps.unit.key.answered = true
    return view
  } catch (err) {
    // The key's answer is already stored (another holder got there first): the retry replays it.
    throw answerTakenError(err) ?? err
  } finally {
    await logged
  }
}

/** The integrator's outcome set on `presented` when the scope has an endpoint and the rules approve; answers the attempt log's write. */
async function askIntegratorFor(
  deps: AppDeps,
  ctx: RequestCtx,
  presented: PresentedAuthorization,
): Promise<Promise<void> | undefined> {
  const endpoint = await endpointFor(deps, ctx)
  if (!endpoint) return undefined
  const wouldBe = await precheck(deps, presented)
  if (!wouldBe) return undefined
  const { outcome, logged } = await askIntegrator(deps, endpoint, {
    scope: ctx,
    authorization: wouldBe,
    // In the account's currency (the authorization's `amount`), as a partial approval answers.
    request: { type: 'authorization', amount: wouldBe.amount },
    requestId: ctx.requestId,
  })
  presented.integrator = outcome
  return logged
}
