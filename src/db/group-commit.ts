/** A request waiting for its batch: what it asks, and how its caller is answered. */
export interface Waiting<I, R> {
  input: I
  resolve: (result: R) => void
  reject: (err: unknown) => void
}

export interface GroupCommitOptions<I, R> {
  /** Most batches running at once: more than the database's cores only queue inside it. */
  slots: number
  /** Most requests in one batch. */
  maxBatch: number
  /**
   * The rows a request writes (an account): its next requests wait while a batch holding one of them runs.
   * Needed only with more than one slot.
   */
  keysOf?: (input: I) => readonly string[]
  /**
   * Runs one batch (its statements and one commit) and answers each request, or hands some back with `again`:
   * they go first in the next batch, before anything that arrived since.
   */
  run: (batch: Waiting<I, R>[], again: (requests: Waiting<I, R>[]) => void) => Promise<void>
}

/**
 * Group commit. A request runs at once when a slot is free; while every slot is busy, the requests that arrive
 * wait and then run together, one batch and one commit for all of them, each still answered on its own terms
 * and only after its commit. At low load nothing waits; under load a process writes many requests for the
 * price of one round trip and one WAL flush. A request whose keys are held by a running batch waits for its
 * answer, so a process writes each key's requests in the order they arrived; those that waited together go
 * together, which keeps a single hot key fast.
 */
export class GroupCommit<I, R> {
  private waiting: Waiting<I, R>[] = []
  /** Keys held by a running batch. */
  private readonly busy = new Set<string>()
  private inFlight = 0
  private scheduled = false

  constructor(private readonly options: GroupCommitOptions<I, R>) {}

  submit(input: I): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject })
      this.schedule()
    })
  }

  /** Drains on the next turn of the event loop, so the requests read in this turn go in one batch. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.slots || this.waiting.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      while (this.inFlight < this.options.slots) {
        const batch = this.takeBatch()
        if (batch.length === 0) break
        const keys = new Set(batch.flatMap((w) => this.keysOf(w.input)))
        this.inFlight++
        for (const key of keys) this.busy.add(key)
        void this.options
          .run(batch, (requests) => {
            this.waiting.unshift(...requests)
          })
          .catch((err) => {
            for (const w of batch) w.reject(err)
          })
          .finally(() => {
            this.inFlight--
            for (const key of keys) this.busy.delete(key)
            this.schedule()
          })
      }
    })
  }

  private keysOf(input: I): readonly string[] {
    return this.options.keysOf?.(input) ?? []
  }

  /** The oldest waiting requests none of whose keys is busy, up to maxBatch; the rest keep their order. */
  private takeBatch(): Waiting<I, R>[] {
    const batch: Waiting<I, R>[] = []
    const rest: Waiting<I, R>[] = []
    for (const w of this.waiting) {
      if (
        batch.length < this.options.maxBatch &&
        !this.keysOf(w.input).some((key) => this.busy.has(key))
      )
        batch.push(w)
      else rest.push(w)
    }
    this.waiting = rest
    return batch
  }
}

/** Batches a process runs at once on this database: one fewer than its pooled connections (the reads around them need one), at most `max`; one on the embedded database. */
export function groupCommitSlots(pooled: number | null, max: number): number {
  return pooled === null ? 1 : Math.min(max, Math.max(1, pooled - 1))
}
