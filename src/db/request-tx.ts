import { AsyncLocalStorage } from 'node:async_hooks'
import {
  CompiledQuery, type DatabaseConnection, type Dialect, type DialectAdapter, type Driver, type QueryResult, type TransactionSettings,
} from 'kysely'

/**
 * The transaction of one request whose answer is stored under an Idempotency-Key (`http/idempotency.ts`).
 * Its first write begins it (a `withTx`, or any INSERT, UPDATE or DELETE the request sends); from then on
 * every query the request sends runs in it, and it commits only together with the row that stores the
 * request's answer. A crash or a failed write at any moment leaves either both or neither.
 */
export interface RequestTransaction {
  /** True until the answer is being stored: after that the request's queries go back to the pool. */
  open: boolean
  /** The connection the transaction runs on, once the request has written. */
  connection: DatabaseConnection | null
  /** How that connection is lent to the request's queries (never released by them). */
  lent: LentConnection | null
  /** Releases the connection to the pool (and the single-connection mutex) after commit or rollback. */
  release: (() => Promise<void>) | null
  /** Commit and rollback, as the driver does them. */
  driver: Driver | null
}

const storage = new AsyncLocalStorage<RequestTransaction>()

/** Runs `fn` (and everything it starts) as the request that `scope` answers. */
export function runInRequestTransaction<T>(scope: RequestTransaction, fn: () => T): T {
  return storage.run(scope, fn)
}

export function newRequestTransaction(): RequestTransaction {
  return { open: true, connection: null, lent: null, release: null, driver: null }
}

function current(): RequestTransaction | undefined {
  const scope = storage.getStore()
  return scope?.open ? scope : undefined
}

/**
 * Runs `fn` as if no request were around it: its writes commit on their own at once. For records that must
 * survive the request whatever it answers: the intent of a call to a processor or the eSIM network, written
 * before the call so that a crash leaves a trace to reconcile. Once the request has begun its transaction on
 * a database with a single connection, `fn` runs in it instead (it could not get another connection).
 */
export function autonomously<T>(fn: () => T): T {
  const scope = current()
  if (scope?.lent && scope.lent.single) return fn()
  return storage.exit(fn)
}

/** Runs `fn` outside any request (a batch serving many requests): its queries never join one request's transaction. */
export function outsideRequest<T>(fn: () => T): T {
  return storage.exit(fn)
}

/** Commits the request's transaction (if it wrote anything) and hands its connection back. */
export function commitRequestTransaction(scope: RequestTransaction): Promise<void> {
  return endRequestTransaction(scope, true)
}

/** Rolls the request's transaction back: nothing it wrote remains. */
export function rollbackRequestTransaction(scope: RequestTransaction): Promise<void> {
  return endRequestTransaction(scope, false)
}

async function endRequestTransaction(scope: RequestTransaction, commit: boolean): Promise<void> {
  scope.open = false
  const { connection, driver, release } = scope
  if (!connection || !driver || !release) return
  scope.connection = null
  scope.lent = null
  try {
    if (commit) await driver.commitTransaction(connection)
    else await driver.rollbackTransaction(connection).catch(() => {})
  } catch (err) {
    await driver.rollbackTransaction(connection).catch(() => {})
    throw err
  } finally {
    await release()
  }
}

const WRITE = /^\s*(insert|update|delete|merge)\b/i
const WRITE_IN_CTE = /\b(insert\s+into|update\s+[\w."]+(\s+as\s+\w+)?\s+set|delete\s+from)\b/i

/** Whether a statement writes (a data-modifying statement, or a WITH whose parts modify data). */
export function isWrite(sql: string): boolean {
  return WRITE.test(sql) || (/^\s*with\b/i.test(sql) && WRITE_IN_CTE.test(sql))
}

/**
 * The request's connection as its queries see it: queries run on it, "transactions" inside it are
 * savepoints, and releasing it does nothing (the request's commit or rollback does).
 */
class LentConnection implements DatabaseConnection {
  private savepoints = 0
  constructor(readonly inner: DatabaseConnection, readonly single: boolean) {}

  /**
   * A write outside any `withTx` runs under a savepoint of its own: when it fails (a unique index the
   * caller expects and catches), the request's transaction goes on as it would have without it.
   */
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.savepoints > 0 || !isWrite(query.sql)) return this.inner.executeQuery<R>(query)
    await this.begin()
    try {
      const result = await this.inner.executeQuery<R>(query)
      await this.commit()
      return result
    } catch (err) {
      await this.rollback()
      throw err
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize!)
  }

  async begin(): Promise<void> {
    await this.inner.executeQuery(CompiledQuery.raw(`SAVEPOINT request_sp_${++this.savepoints}`))
  }

  async commit(): Promise<void> {
    await this.inner.executeQuery(CompiledQuery.raw(`RELEASE SAVEPOINT request_sp_${this.savepoints--}`))
  }

  async rollback(): Promise<void> {
    const name = `request_sp_${this.savepoints--}`
    await this.inner.executeQuery(CompiledQuery.raw(`ROLLBACK TO SAVEPOINT ${name}`))
    await this.inner.executeQuery(CompiledQuery.raw(`RELEASE SAVEPOINT ${name}`))
  }
}

/** One connection at a time (the embedded database): what Kysely does itself for such dialects, done here so a request can lend its own. */
class Mutex {
  private tail: Promise<void> = Promise.resolve()

  async lock(): Promise<() => void> {
    let unlock!: () => void
    const next = new Promise<void>((resolve) => { unlock = resolve })
    const previous = this.tail
    this.tail = previous.then(() => next)
    await previous
    return unlock
  }
}

/**
 * Wraps a driver so that a request's queries find its transaction: once a request inside
 * `runInRequestTransaction` writes, its connection is kept in a transaction and lent to every further
 * query of the request. Outside such a request it is the driver it wraps.
 */
class RequestAwareDriver implements Driver {
  private readonly mutex: Mutex | null
  /** Per connection handed out: what gives it back (the pool's release, and the mutex). */
  private readonly raw = new WeakMap<DatabaseConnection, { connection: DatabaseConnection; unlock: (() => void) | null }>()
  /** Handles whose connection a request's transaction now holds: the query that borrowed them must not give them back. */
  private readonly kept = new WeakMap<DatabaseConnection, LentConnection>()

  constructor(private readonly inner: Driver, private readonly single: boolean) {
    this.mutex = single ? new Mutex() : null
  }

  init(): Promise<void> {
    return this.inner.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const scope = current()
    if (scope?.lent) return scope.lent
    // Outside a request's scope on a pool (a batch, a request without a key): the pool's connection, untracked.
    if (!scope && !this.mutex) return this.inner.acquireConnection()
    const unlock = this.mutex ? await this.mutex.lock() : null
    const connection = await this.inner.acquireConnection()
    const handle = scope ? this.watchWrites(scope, connection) : connection
    this.raw.set(handle, { connection, unlock })
    return handle
  }

  /** A pooled connection lent to a request: its first write begins the request's transaction on it. */
  private watchWrites(scope: RequestTransaction, connection: DatabaseConnection): DatabaseConnection {
    const driver = this
    const handle: DatabaseConnection = {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        if (!scope.lent && scope.open && isWrite(query.sql)) return (await driver.begin(scope, handle)).executeQuery<R>(query)
        return connection.executeQuery<R>(query)
      },
      streamQuery<R>(query: CompiledQuery, chunkSize?: number) {
        return connection.streamQuery<R>(query, chunkSize!)
      },
    }
    return handle
  }

  /** Begins the request's transaction on the connection behind `handle` and keeps it for the request. */
  private async begin(scope: RequestTransaction, handle: DatabaseConnection): Promise<LentConnection> {
    const { connection, unlock } = this.raw.get(handle)!
    await this.inner.beginTransaction(connection, {})
    const lent = new LentConnection(connection, this.single)
    Object.assign(scope, { connection, lent, driver: this.inner })
    this.kept.set(handle, lent)
    scope.release = async () => {
      this.kept.delete(handle)
      this.raw.delete(handle)
      try {
        await this.inner.releaseConnection(connection)
      } finally {
        unlock?.()
      }
    }
    return lent
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (connection instanceof LentConnection) return connection.begin()
    const scope = current()
    // A request's first `withTx`: the transaction becomes the request's, committed with its answer.
    if (scope && !scope.lent && this.raw.has(connection)) return (await this.begin(scope, connection)).begin()
    return this.inner.beginTransaction(this.raw.get(connection)?.connection ?? connection, settings)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lent = connection instanceof LentConnection ? connection : this.kept.get(connection)
    if (lent) return lent.commit()
    return this.inner.commitTransaction(this.raw.get(connection)?.connection ?? connection)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lent = connection instanceof LentConnection ? connection : this.kept.get(connection)
    if (lent) return lent.rollback()
    return this.inner.rollbackTransaction(this.raw.get(connection)?.connection ?? connection)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof LentConnection || this.kept.has(connection)) return
    const held = this.raw.get(connection)
    this.raw.delete(connection)
    try {
      await this.inner.releaseConnection(held?.connection ?? connection)
    } finally {
      held?.unlock?.()
    }
  }

  destroy(): Promise<void> {
    return this.inner.destroy()
  }
}

/** The dialect with `RequestAwareDriver`; `single`: the database has one connection (PGlite). */
export function requestAwareDialect(inner: Dialect, single: boolean): Dialect {
  return {
    createDriver: () => new RequestAwareDriver(inner.createDriver(), single),
    createQueryCompiler: () => inner.createQueryCompiler(),
    // The driver serializes a single-connection database itself, so Kysely must not add its own mutex.
    createAdapter: (): DialectAdapter => {
      const adapter = inner.createAdapter()
      return Object.create(adapter, { supportsMultipleConnections: { get: () => true } })
    },
    createIntrospector: (db) => inner.createIntrospector(db),
  }
}
