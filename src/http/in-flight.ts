import { createHash } from 'node:crypto'
import pg from 'pg'
import { GroupCommit, type Waiting } from '../db/group-commit.js'

/** Most keys one lock or unlock statement carries. */
const MAX_BATCH = 256

/**
 * The Idempotency-Keys whose requests are running now, known by a lock that dies with its holder. In this
 * process: a set. Across processes and nodes on PostgreSQL: a session-level advisory lock per key, all of a
 * process's held on one connection of their own, so they are released when the process or that connection
 * dies and a retry after a crash proceeds at once. Locks and unlocks asked for in the same turn of the event
 * loop go in one statement. The embedded database has one process, so the set is all it needs; nothing of
 * it outlives a restart.
 *
 * The lock only tells a duplicate to wait (409 idempotency_request_in_progress): what guarantees one effect
 * per key is the key's row, written in the effect's own transaction under a unique index.
 */
export class InFlightKeys {
  /** Keys held in this process, with what their request asked (so a different request can be told apart). */
  private readonly local = new Map<string, string>()
  private client: pg.Client | null = null
  private connecting: Promise<pg.Client> | null = null
  private closed = false
  private readonly locks: GroupCommit<string, boolean> | null
  private readonly unlocks: GroupCommit<string, void> | null

  constructor(private readonly databaseUrl: string | null) {
    this.locks = databaseUrl ? new GroupCommit({ slots: 1, maxBatch: MAX_BATCH, run: (batch) => this.run(batch, 'pg_try_advisory_lock') }) : null
    this.unlocks = databaseUrl ? new GroupCommit({ slots: 1, maxBatch: MAX_BATCH, run: (batch) => this.run(batch, 'pg_advisory_unlock') }) : null
  }

  /**
   * Takes the key for a request (`fingerprint` says what it asks). Null when taken; otherwise it is held: the
   * holder's fingerprint when it runs in this process, '' when it runs on another node.
   */
  async acquire(id: string, fingerprint: string): Promise<string | null> {
    const holder = this.local.get(id)
    if (holder !== undefined) return holder
    this.local.set(id, fingerprint)
    if (!this.locks) return null
    try {
      const taken = await this.locks.submit(lockKey(id))
      if (!taken) this.local.delete(id)
      return taken ? null : ''
    } catch (err) {
      this.local.delete(id)
      throw err
    }
  }

  /**
   * Gives the key back. The advisory unlock follows in the background: a lock this process takes again
   * meanwhile only counts up on the same session, and its own unlock counts down again.
   */
  release(id: string): void {
    if (!this.local.delete(id) || !this.unlocks) return
    this.unlocks.submit(lockKey(id)).catch(() => { /* a lost connection released every lock already */ })
  }

  async close(): Promise<void> {
    this.closed = true
    const client = this.client
    this.client = null
    await client?.end().catch(() => {})
  }

  private async run<R>(batch: Waiting<string, R>[], fn: 'pg_try_advisory_lock' | 'pg_advisory_unlock'): Promise<void> {
    const client = await this.connection()
    const { rows } = await client.query<{ ok: boolean }>(
      `SELECT ${fn}(k::bigint) AS ok FROM unnest($1::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n`, [batch.map((w) => w.input)])
    batch.forEach((w, i) => (w.resolve as (ok: boolean) => void)(rows[i]?.ok === true))
  }

  /** The lock connection, opened on first use and again after it was lost (its locks went with it). */
  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client)
    if (this.closed) return Promise.reject(new Error('the idempotency lock connection is closed'))
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl!, application_name: 'svc idempotency locks' })
      const lost = () => { if (this.client === client) this.client = null }
      client.on('error', lost)
      client.on('end', lost)
      try {
        await client.connect()
        this.client = client
        return client
      } finally {
        this.connecting = null
      }
    })()
    return this.connecting
  }
}

/** The advisory lock key of an idempotency key: 64 bits of its hash, as a signed bigint's text. */
function lockKey(id: string): string {
  return createHash('sha256').update(id).digest().readBigInt64BE(0).toString()
}
