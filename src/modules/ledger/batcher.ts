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
 * for all of them (`repo.applyAdjustments`). Each still applies or is refused on its own terms, as if they
 * ran one by one in arrival order, and is answered only after its commit; the batch only shares the round
 * trip and the WAL flush, so under load a process writes many adjustments for the price of one, and at low
 * load nothing waits. Adjustments of one account wait while a statement holding an earlier one of it runs,
 * so a process applies each account's adjustments in the order they arrived; those that waited together go
 * together, which is what keeps a single hot account fast.
 */
export class AdjustmentBatcher {
  private waiting: Waiting[] = []
  /** Accounts with an adjustment in a running statement: their next ones wait for its answer. */
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
        const accounts = new Set(batch.map((w) => w.input.accountId))
        this.inFlight++
        for (const id of accounts) this.busy.add(id)
        void this.run(batch).finally(() => {
          this.inFlight--
          for (const id of accounts) this.busy.delete(id)
          this.schedule()
        })
      }
    })
  }

  /** The oldest waiting adjustments of accounts not busy, up to MAX_BATCH; the rest keep their order. */
  private takeBatch(): Waiting[] {
    const batch: Waiting[] = []
    const rest: Waiting[] = []
    for (const w of this.waiting) {
      if (batch.length < MAX_BATCH && !this.busy.has(w.input.accountId)) batch.push(w)
      else rest.push(w)
    }
    this.waiting = rest
    return batch
  }

  private async run(batch: Waiting[]): Promise<void> {
    try {
      const results = await repo.applyAdjustments(this.db, batch.map((w) => w.input), MAX_BALANCE, this.clock.now())
      // An account's adjustments after one it refused were not tried: they go first in the next statement.
      const deferred = batch.filter((w, i) => results[i].deferred)
      batch.forEach((w, i) => { if (!results[i].deferred) w.resolve(results[i]) })
      this.waiting.unshift(...deferred)
    } catch (err) {
      if (batch.length > 1 && isUniqueViolation(err, repo.CLIENT_TXN_CONSTRAINT)) {
        await this.oneByOne(batch)
      } else {
        for (const w of batch) w.reject(err)
      }
    }
  }

  /**
   * After a batch met the unique index (one of them repeats a client_transaction_id already applied, so the
   * statement applied none of them): each goes again on its own, each account's in order, and only the
   * repeated one meets the index.
   */
  private async oneByOne(batch: Waiting[]): Promise<void> {
    const byAccount = new Map<string, Waiting[]>()
    for (const w of batch) {
      const queue = byAccount.get(w.input.accountId)
      if (queue) queue.push(w)
      else byAccount.set(w.input.accountId, [w])
    }
    await Promise.all([...byAccount.values()].map(async (queue) => {
      for (const w of queue) {
        await repo.applyAdjustments(this.db, [w.input], MAX_BALANCE, this.clock.now()).then((results) => w.resolve(results[0]), w.reject)
      }
    }))
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
