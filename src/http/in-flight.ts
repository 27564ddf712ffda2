import { hash } from 'node:crypto'
import type pg from 'pg'
import type { Selectable } from 'kysely'
import { GroupCommit, type Waiting } from '../db/group-commit.js'
import type { IdempotencyKeysTable } from '../db/types.js'

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
  /** The keys among them whose advisory lock this process holds (taken by `acquire` on PostgreSQL). */
  private readonly advisory = new Set<string>()
  private client: pg.Client | null = null
  private connecting: Promise<pg.Client> | null = null
  private closed = false
  private readonly locks: GroupCommit<LockAsk, Taken> | null
  private readonly unlocks: GroupCommit<string, void> | null

  constructor(private readonly databaseUrl: string | null) {
    this.locks = databaseUrl
      ? new GroupCommit({ slots: 1, maxBatch: MAX_BATCH, run: (batch) => this.lock(batch) })
      : null
    this.unlocks = databaseUrl
      ? new GroupCommit({ slots: 1, maxBatch: MAX_BATCH, run: (batch) => this.unlock(batch) })
      : null
  }

  /**
   * Takes the key of `request` (`fingerprint` says what it asks). `holder` is null when taken; otherwise the
   * key is held: the holder's fingerprint when it runs in this process, '' when it runs on another node.
   * On PostgreSQL the same statement reads the answer already stored under the key (`stored`: the row or
   * null); elsewhere `stored` is undefined and the caller reads it.
   */
  async acquire(id: string, fingerprint: string, request: KeyRef): Promise<Taken> {
    const holder = this.local.get(id)
    if (holder !== undefined) return { holder }
    this.local.set(id, fingerprint)
    if (!this.locks) return { holder: null }
    try {
      const taken = await this.locks.submit({ lockKey: lockKey(id), ...request })
      if (taken.holder !== null) this.local.delete(id)
      else this.advisory.add(id)
      return taken
    } catch (err) {
      this.local.delete(id)
      throw err
    }
  }

  /**
   * Takes the key in this process only, for a request whose own statement locks the key in the database and
   * reads its stored answer (`KeyInStatement`): no round trip here. Answers null when taken, otherwise the
   * fingerprint of the request of this process that holds it.
   */
  holdLocally(id: string, fingerprint: string): string | null {
    const holder = this.local.get(id)
    if (holder !== undefined) return holder
    this.local.set(id, fingerprint)
    return null
  }

  /**
   * Gives the key back. The advisory unlock follows in the background: a lock this process takes again
   * meanwhile only counts up on the same session, and its own unlock counts down again.
   */
  release(id: string): void {
    if (!this.local.delete(id) || !this.advisory.delete(id) || !this.unlocks) return
    this.unlocks.submit(lockKey(id)).catch(() => {
      /* a lost connection released every lock already */
    })
  }

  async close(): Promise<void> {
    this.closed = true
    const client = this.client
    this.client = null
    await client?.end().catch(() => {})
  }

  /** One statement for the batch: each key's advisory lock, and the answer already stored under it (if any). */
  private async lock(batch: Waiting<LockAsk, Taken>[]): Promise<void> {
    const client = await this.connection()
    const column = (f: (a: LockAsk) => string) => batch.map((w) => f(w.input))
    const { rows } = await client.query<{ ok: boolean } & StoredAnswer>(
      `SELECT pg_try_advisory_lock(t.k::bigint) AS ok, ${STORED_COLUMNS}
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(k, org, env, key, n)
       LEFT JOIN idempotency_keys AS ik ON ik.organization_id = t.org AND ik.environment = t.env AND ik.key = t.key
       ORDER BY t.n`,
      [
        column((a) => a.lockKey),
        column((a) => a.organizationId),
        column((a) => a.environment),
        column((a) => a.key),
      ],
    )
    batch.forEach((w, i) => {
      const { ok, ...row } = rows[i]
      w.resolve({ holder: ok ? null : '', stored: row.method === null ? null : row })
    })
  }

  private async unlock(batch: Waiting<string, void>[]): Promise<void> {
    const client = await this.connection()
    await client.query('SELECT pg_advisory_unlock(k::bigint) FROM unnest($1::text[]) AS t(k)', [
      batch.map((w) => w.input),
    ])
    for (const w of batch) w.resolve()
  }

  /** The lock connection, opened on first use and again after it was lost (its locks went with it). */
  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client)
    if (this.closed) return Promise.reject(new Error('the idempotency lock connection is closed'))
    this.connecting ??= (async () => {
      const { default: pg } = await import('pg')
      const client = new pg.Client({
        connectionString: this.databaseUrl!,
        application_name: 'svc idempotency locks',
      })
      const lost = () => {
        if (this.client === client) this.client = null
      }
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

/** Where an idempotency key's answer is stored. */
export interface KeyRef {
  organizationId: string
  environment: string
  key: string
}

/** An answer stored under a key, as the idempotency layer reads it. */
export type StoredAnswer = Omit<
  Selectable<IdempotencyKeysTable>,
  'organization_id' | 'environment' | 'key'
>

/** The columns of `StoredAnswer`, as read from `idempotency_keys` (alias `ik`). */
export const STORED_COLUMNS =
  'ik.method, ik.path, ik.request_hash, ik.response_status, ik.response_body, ik.response_json, ik.created_at'

interface LockAsk extends KeyRef {
  lockKey: string
}
export interface Taken {
  holder: string | null
  stored?: StoredAnswer | null
}

/**
 * The advisory lock key of an idempotency key (`id`: organization, environment and key, NUL-separated): 64 bits
 * of its hash, as a signed bigint's text. A statement that locks the key itself takes the same lock.
 */
export function lockKey(id: string): string {
  return hash('sha256', id, 'buffer').readBigInt64BE(0).toString()
}
