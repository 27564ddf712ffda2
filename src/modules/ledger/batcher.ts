import type { AppDeps } from '../../app-deps.js'
import { databasePoolSize } from '../../config.js'
import { isUniqueViolation } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { Clock } from '../../lib/clock.js'
import { MAX_BALANCE } from './post.js'
import * as repo from './repo.js'

/** Most credits and debits one statement applies. */
const MAX_BATCH = 64
/** Most batch statements one process runs at once: more than a database's cores only queue inside it. */
const MAX_IN_FLIGHT = 4

interface Waiting {
  input: repo.AdjustmentInput
  resolve: (result: repo.AdjustmentResult) => void
  reject: (err: unknown) => void
}

/**
 * Group commit for credits and debits. An adjustment is applied at once when a statement slot is free; while
 * every slot is busy, the adjustments that arrive wait and then go together, one statement and one commit
 * for all of them (`repo.applyAdjustments`). Each still applies or is refused on its own terms and is
 * answered only after its commit; the batch only shares the round trip and the WAL flush, so under load a
 * process writes many adjustments for the price of one, and at low load nothing waits. A statement holds at
 * most one adjustment per account, and an account's next adjustment waits until the statement holding its
 * previous one has answered: a process applies each account's adjustments in the order they arrived.
 */
export class AdjustmentBatcher {
  private waiting: Waiting[] = []
  /** Accounts with an adjustment in a running statement: their next ones wait, so each account's apply in arrival order. */
  private readonly busy = new Set<string>()
  private inFlight = 0
  private scheduled = false

  constructor(private readonly db: Db, private readonly clock: Clock, private readonly maxInFlight: number) {}

  apply(input: repo.AdjustmentInput): Promise<repo.AdjustmentResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject })
      this.schedule()
    })
  }

  /** Drains on the next turn of the event loop, so the requests read in this turn go in one statement. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.waiting.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      while (this.inFlight < this.maxInFlight) {
        const batch = this.takeBatch()
        if (batch.length === 0) break
        this.inFlight++
        for (const w of batch) this.busy.add(w.input.accountId)
        void this.run(batch).finally(() => {
          this.inFlight--
          for (const w of batch) this.busy.delete(w.input.accountId)
          this.schedule()
        })
      }
    })
  }

  /** The oldest waiting adjustments, up to MAX_BATCH, one per account and none of a busy account; the rest keep their order. */
  private takeBatch(): Waiting[] {
    const batch: Waiting[] = []
    const rest: Waiting[] = []
    const accounts = new Set<string>()
    for (const w of this.waiting) {
      if (batch.length < MAX_BATCH && !accounts.has(w.input.accountId) && !this.busy.has(w.input.accountId)) {
        accounts.add(w.input.accountId)
        batch.push(w)
      } else {
        rest.push(w)
      }
    }
    this.waiting = rest
    return batch
  }

  private async run(batch: Waiting[]): Promise<void> {
    try {
      const results = await repo.applyAdjustments(this.db, batch.map((w) => w.input), MAX_BALANCE, this.clock.now())
      batch.forEach((w, i) => w.resolve(results[i]))
    } catch (err) {
      if (batch.length > 1 && isUniqueViolation(err, repo.CLIENT_TXN_CONSTRAINT)) {
        // One of them repeats a client_transaction_id already applied, so the statement applied none of them:
        // each goes again on its own, and only the repeated one meets the index.
        await Promise.all(batch.map((w) => repo.applyAdjustments(this.db, [w.input], MAX_BALANCE, this.clock.now())
          .then((results) => w.resolve(results[0]), w.reject)))
      } else {
        for (const w of batch) w.reject(err)
      }
    }
  }
}

const batchers = new WeakMap<Db, AdjustmentBatcher>()

/** The process's batcher for this database; the embedded database serves one statement at a time. */
export function adjustmentBatcher(deps: AppDeps): AdjustmentBatcher {
  let batcher = batchers.get(deps.db)
  if (!batcher) {
    // Leave one pooled connection for the reads around the batches (token lookups, refusal explanations).
    const slots = deps.config.databaseUrl ? Math.min(MAX_IN_FLIGHT, Math.max(1, databasePoolSize(deps.config) - 1)) : 1
    batcher = new AdjustmentBatcher(deps.db, deps.clock, slots)
    batchers.set(deps.db, batcher)
  }
  return batcher
}
