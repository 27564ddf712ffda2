/**
 * How many KYC uploads one process receives and stores at once. Each holds up to an 85 MiB body (as text, then
 * parsed) and one document's ciphertext, about 250 MB at its peak, so four bound a process to about 1 GB
 * whatever the number of callers (bench/README.md, "KYC upload memory").
 */
export const KYC_UPLOADS_AT_ONCE = 4
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

/** A counting semaphore with a first-come queue and a bounded wait. */
export class UploadSlots {
  private active = 0
  private readonly queue: { grant: () => void }[] = []

  constructor(readonly limit = KYC_UPLOADS_AT_ONCE, readonly waitMs = KYC_UPLOAD_WAIT_MS) {}

  get inUse(): number { return this.active }
  get waiting(): number { return this.queue.length }

  claim(): SlotTicket {
    let state: 'waiting' | 'held' | 'done' = 'waiting'
    let settle!: (ok: boolean) => void
    const granted = new Promise<boolean>((resolve) => { settle = resolve })
    const entry = {
      grant: () => {
        clearTimeout(timer)
        state = 'held'
        this.active++
        settle(true)
      },
    }
    const leaveQueue = () => {
      const at = this.queue.indexOf(entry)
      if (at !== -1) this.queue.splice(at, 1)
    }
    let timer: NodeJS.Timeout | undefined
    if (this.active < this.limit && this.queue.length === 0) {
      entry.grant()
    } else {
      this.queue.push(entry)
      timer = setTimeout(() => {
        if (state !== 'waiting') return
        state = 'done'
        leaveQueue()
        settle(false)
      }, this.waitMs)
      timer.unref()
    }
    return {
      granted,
      release: () => {
        if (state === 'waiting') {
          clearTimeout(timer)
          leaveQueue()
          settle(false)
        } else if (state === 'held') {
          this.active--
          this.queue.shift()?.grant()
        }
        state = 'done'
      },
    }
  }
}
