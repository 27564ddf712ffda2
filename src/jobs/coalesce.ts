/**
 * Gathers calls made close together (the same turn of the event loop, or within `delayMs`) into one
 * batch call: a hundred concurrent jobs then cost one database statement instead of a hundred.
 * `run` answers one output per input, in order; a failure rejects every call of the batch.
 */
export class Coalescer<I, O> {
  private pending: { input: I; resolve: (out: O) => void; reject: (err: unknown) => void }[] = []
  private immediate: NodeJS.Immediate | null = null
  private timeout: NodeJS.Timeout | null = null

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly options: { maxBatch?: number; delayMs?: number } = {},
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject })
      if (this.pending.length >= (this.options.maxBatch ?? 500)) this.flush()
      else if (!this.immediate && !this.timeout) {
        if (this.options.delayMs)
          this.timeout = setTimeout(() => this.flush(), this.options.delayMs)
        else this.immediate = setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    if (this.immediate) clearImmediate(this.immediate)
    if (this.timeout) clearTimeout(this.timeout)
    this.immediate = null
    this.timeout = null
    const batch = this.pending.splice(0, this.pending.length)
    if (batch.length === 0) return
    this.run(batch.map((b) => b.input)).then(
      (outs) => batch.forEach((b, i) => b.resolve(outs[i])),
      (err) => batch.forEach((b) => b.reject(err)),
    )
  }
}
