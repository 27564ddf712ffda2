/**
 * How many KYC uploads one process receives and stores at once. Each holds up to an 85 MiB body (as text, then
 * parsed) and one document's ciphertext, about 250 MB at its peak, so four bound a process to about 1 GB
 * whatever the number of callers (bench/README.md, "KYC upload memory").
 */
export const KYC_UPLOADS_AT_ONCE = 4
/** How many of those one organization holds at most: half, so one organization never shuts the others out. */
export const KYC_UPLOADS_PER_ORGANIZATION = Math.floor(KYC_UPLOADS_AT_ONCE / 2)
/** How long an upload waits for a slot before it is answered `429 rate_limited` (its body is not read meanwhile). */
export const KYC_UPLOAD_WAIT_MS = 2_000
/** The Retry-After, in seconds, of an upload refused for want of a slot. */
export const KYC_UPLOAD_RETRY_AFTER_SECONDS = 2

/** One request's claim on a slot: `granted` settles true once it holds one, false when it gave up or was let go. */
export interface SlotTicket {
  granted: Promise<boolean>
  /** Frees the slot, or leaves the queue if still waiting; safe to call more than once. */
  release(): void
}

interface Waiting {
  owner: string
  grant: () => void
}

/**
 * A counting semaphore shared by owners (organizations): at most `limit` slots in use, at most `perOwner` of them
 * by one owner. Waiters are served first come, first served among those whose owner is under its share, so an
 * owner at its share waits for one of its own slots while others pass it; every wait is bounded.
 */
export class UploadSlots {
  private active = 0
  private readonly held = new Map<string, number>()
  private readonly queue: Waiting[] = []

  constructor(
    readonly limit = KYC_UPLOADS_AT_ONCE,
    readonly waitMs = KYC_UPLOAD_WAIT_MS,
    readonly perOwner = KYC_UPLOADS_PER_ORGANIZATION,
  ) {}

  get inUse(): number {
    return this.active
  }
  get waiting(): number {
    return this.queue.length
  }
  /** Slots `owner` holds now. */
  heldBy(owner: string): number {
    return this.held.get(owner) ?? 0
  }

  claim(owner: string): SlotTicket {
    let state: 'waiting' | 'held' | 'done' = 'waiting'
    let settle!: (ok: boolean) => void
    const granted = new Promise<boolean>((resolve) => {
      settle = resolve
    })
    const entry: Waiting = {
      owner,
      grant: () => {
        clearTimeout(timer)
        state = 'held'
        this.active++
        this.held.set(owner, this.heldBy(owner) + 1)
        settle(true)
      },
    }
    const leaveQueue = () => {
      const at = this.queue.indexOf(entry)
      if (at !== -1) this.queue.splice(at, 1)
    }
    this.queue.push(entry)
    const timer = setTimeout(() => {
      if (state !== 'waiting') return
      state = 'done'
      leaveQueue()
      settle(false)
    }, this.waitMs)
    timer.unref()
    this.dispatch()
    return {
      granted,
      release: () => {
        if (state === 'waiting') {
          clearTimeout(timer)
          leaveQueue()
          settle(false)
        } else if (state === 'held') {
          this.active--
          const left = this.heldBy(owner) - 1
          if (left > 0) this.held.set(owner, left)
          else this.held.delete(owner)
          this.dispatch()
        }
        state = 'done'
      },
    }
  }

  /** Grants free slots to the earliest waiters whose owner is under its share. */
  private dispatch(): void {
    for (let i = 0; i < this.queue.length && this.active < this.limit; ) {
      const next = this.queue[i]
      if (this.heldBy(next.owner) >= this.perOwner) {
        i++
        continue
      }
      this.queue.splice(i, 1)
      next.grant()
    }
  }
}
