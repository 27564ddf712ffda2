import type { Db } from '../../db/types.js'
import * as repo from './repo.js'

/**
 * Cuts a report's CSV into parts of whole lines, each written (its own short statement) as soon as it holds
 * `partBytes`: generation keeps one part of text in memory whatever the number of rows. Counts what it wrote
 * and the most text it ever held (`maxBufferedBytes`, what tests and benchmarks check the bound with).
 */
export class PartWriter {
  private lines: string[] = []
  private buffered = 0
  /** Parts written so far (the next part's seq). */
  parts = 0
  /** Bytes of CSV appended, written or not. */
  sizeBytes = 0
  /** The largest `buffered` ever reached: at most partBytes plus one line. */
  maxBufferedBytes = 0

  constructor(
    private readonly db: Db,
    private readonly reportId: string,
    readonly generation: string,
    private readonly partBytes: number,
  ) {}

  /** Appends one line; answers true once the buffer holds a part's worth (the caller then awaits `flush`). */
  add(line: string): boolean {
    const bytes = Buffer.byteLength(line)
    this.lines.push(line)
    this.buffered += bytes
    this.sizeBytes += bytes
    if (this.buffered > this.maxBufferedBytes) this.maxBufferedBytes = this.buffered
    return this.buffered >= this.partBytes
  }

  /** Writes what is buffered as the next part; false when the report is no longer pending (nothing was written). */
  async flush(): Promise<boolean> {
    if (this.lines.length === 0) return true
    const content = this.lines.join('')
    this.lines = []
    this.buffered = 0
    const written = await repo.insertPendingPart(this.db, {
      reportId: this.reportId,
      generation: this.generation,
      seq: this.parts,
      content,
    })
    if (written) this.parts++
    return written
  }
}
