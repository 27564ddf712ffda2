import { databasePoolSize } from '../../config.js'
import { GroupCommit, groupCommitSlots, type Waiting } from '../../db/group-commit.js'
import type { Db } from '../../db/types.js'
import type { Clock } from '../../lib/clock.js'
import { MAX_BALANCE } from './post.js'
import * as repo from './repo.js'
import { moduleState } from '../module.js'

/** Most credits and debits one statement applies. */
const MAX_BATCH = 64
/** Most batch statements one process runs at once. */
const MAX_IN_FLIGHT = 4

type WaitingAdjustment = Waiting<repo.AdjustmentInput, repo.AdjustmentResult>

/**
 * Group commit for credits and debits (`GroupCommit`): the adjustments that wait together go in one
 * statement and one commit (`repo.applyAdjustments`), each applied or refused as if they ran one by one in
 * arrival order; an account's adjustments wait while a statement holding an earlier one of it runs.
 */
export class AdjustmentBatcher {
  private readonly group: GroupCommit<repo.AdjustmentInput, repo.AdjustmentResult>

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    slots: number,
  ) {
    this.group = new GroupCommit({
      slots,
      maxBatch: MAX_BATCH,
      keysOf: (input) => [input.accountId],
      run: (batch, again) => this.run(batch, again),
    })
  }

  apply(input: repo.AdjustmentInput): Promise<repo.AdjustmentResult> {
    return this.group.submit(input)
  }

  private async run(
    batch: WaitingAdjustment[],
    again: (requests: WaitingAdjustment[]) => void,
  ): Promise<void> {
    try {
      const results = await repo.applyAdjustments(
        this.db,
        batch.map((w) => w.input),
        MAX_BALANCE,
        this.clock.now(),
      )
      // An account's adjustments after one it refused were not tried: they go first in the next statement.
      batch.forEach((w, i) => {
        if (!results[i].deferred) w.resolve(results[i])
      })
      again(batch.filter((w, i) => results[i].deferred))
    } catch (err) {
      if (batch.length > 1) await this.oneByOne(batch)
      else throw err
    }
  }

  /**
   * After a batch's statement failed (one of them repeats a client_transaction_id already applied, or carries
   * a value the database refuses, so the statement applied none of them): each goes again on its own, each
   * account's in order, and only the offending one answers its error. One request never fails another.
   */
  private async oneByOne(batch: WaitingAdjustment[]): Promise<void> {
    const byAccount = new Map<string, WaitingAdjustment[]>()
    for (const w of batch) {
      const queue = byAccount.get(w.input.accountId)
      if (queue) queue.push(w)
      else byAccount.set(w.input.accountId, [w])
    }
    await Promise.all(
      [...byAccount.values()].map(async (queue) => {
        for (const w of queue) {
          await repo
            .applyAdjustments(this.db, [w.input], MAX_BALANCE, this.clock.now())
            .then((results) => w.resolve(results[0]), w.reject)
        }
      }),
    )
  }
}

/** The process's batcher for its database, built once per runtime. */
export const ADJUSTMENTS = moduleState('ledger.adjustments', (deps) => {
  const slots = groupCommitSlots(
    deps.config.databaseUrl ? databasePoolSize(deps.config) : null,
    MAX_IN_FLIGHT,
  )
  return new AdjustmentBatcher(deps.db, deps.clock, slots)
})
