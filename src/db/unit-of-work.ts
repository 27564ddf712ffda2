import {
  CompiledQuery,
  Kysely,
  type ConnectionProvider,
  type DatabaseConnection,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import type { Database, Db } from './types.js'

/**
 * The database work of one request whose answer must commit with its effect (a request sent with an
 * Idempotency-Key, a console form). A value the route hands to the use case, never found in ambient state:
 *
 * - `db` is the request's database handle. Until the unit begins, its queries run on the pool, each on its
 *   own. The first `withTx(unit.db, …)` begins the unit's transaction; from then on every query sent through
 *   `db` runs in it, and later `withTx` calls are savepoints within it (a failure rolls back only its own).
 * - `autonomous` is for writes that must commit at once, whatever the request answers: the intent of a call to
 *   a processor or the eSIM network, written before the call so that a crash leaves a trace to reconcile. On
 *   PostgreSQL it is the pool. On the embedded database (one connection) it cannot commit apart while the unit
 *   holds the connection: it then runs in the unit's transaction, each statement under a savepoint of its own.
 * - `commit(last)` writes `last` (the stored answer) through `db` and commits it with the unit's transaction;
 *   `rollback()` leaves nothing the unit wrote. A unit that never began writes `last` on its own.
 */
export interface UnitOfWork {
  readonly db: Db
  readonly autonomous: Db
  /** Whether the unit began its transaction (a `withTx` through `db`). */
  readonly begun: boolean
  commit(last?: (db: Db) => Promise<unknown>): Promise<void>
  rollback(): Promise<void>
}

/** One connection at a time (the embedded database): so that a unit can hold it from begin to commit. */
class Mutex {
  private tail: Promise<void> = Promise.resolve()

  async lock(): Promise<() => void> {
    let unlock!: () => void
    const next = new Promise<void>((resolve) => {
      unlock = resolve
    })
    const previous = this.tail
    this.tail = previous.then(() => next)
    await previous
    return unlock
  }
}

/** A connection handed out by `SharedDriver`: the pool's connection and what gives it back. */
interface Held {
  connection: DatabaseConnection
  unlock: (() => void) | null
}

/**
 * The one driver of a database, shared by the root handle and every unit of work: the pool's driver, serialized
 * by a mutex when the database has a single connection (Kysely's own lock for such dialects is per instance,
 * and units are instances of their own).
 */
class SharedDriver {
  private readonly mutex: Mutex | null
  private initialized: Promise<void> | null = null

  constructor(
    readonly inner: Driver,
    readonly single: boolean,
  ) {
    this.mutex = single ? new Mutex() : null
  }

  init(): Promise<void> {
    this.initialized ??= this.inner.init()
    return this.initialized
  }

  async acquire(): Promise<Held> {
    await this.init()
    const unlock = this.mutex ? await this.mutex.lock() : null
    try {
      return { connection: await this.inner.acquireConnection(), unlock }
    } catch (err) {
      unlock?.()
      throw err
    }
  }

  async release(held: Held): Promise<void> {
    try {
      await this.inner.releaseConnection(held.connection)
    } finally {
      held.unlock?.()
    }
  }
}

/** The root handle's driver: the shared driver as Kysely expects one. */
class RootDriver implements Driver {
  private readonly held = new WeakMap<DatabaseConnection, Held>()

  constructor(private readonly shared: SharedDriver) {}

  init(): Promise<void> {
    return this.shared.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const held = await this.shared.acquire()
    this.held.set(held.connection, held)
    return held.connection
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.shared.inner.beginTransaction(connection, settings)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.shared.inner.commitTransaction(connection)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.shared.inner.rollbackTransaction(connection)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const held = this.held.get(connection)
    this.held.delete(connection)
    if (held) await this.shared.release(held)
  }

  destroy(): Promise<void> {
    return this.shared.inner.destroy()
  }
}

/** A connection in a unit's transaction: "transactions" inside it are savepoints; releasing it does nothing. */
class LentConnection implements DatabaseConnection {
  private savepoints = 0

  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.inner.executeQuery<R>(query)
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize!)
  }

  async begin(): Promise<void> {
    await this.inner.executeQuery(CompiledQuery.raw(`SAVEPOINT unit_sp_${++this.savepoints}`))
  }

  async commit(): Promise<void> {
    await this.inner.executeQuery(
      CompiledQuery.raw(`RELEASE SAVEPOINT unit_sp_${this.savepoints--}`),
    )
  }

  async rollback(): Promise<void> {
    const name = `unit_sp_${this.savepoints--}`
    await this.inner.executeQuery(CompiledQuery.raw(`ROLLBACK TO SAVEPOINT ${name}`))
    await this.inner.executeQuery(CompiledQuery.raw(`RELEASE SAVEPOINT ${name}`))
  }
}

/**
 * A statement of the embedded database's autonomous handle while its unit holds the one connection: under a
 * savepoint of its own, so that its failure (a unique index the caller expects) leaves the unit as it was.
 */
class SavepointedConnection implements DatabaseConnection {
  /** Open `withTx` levels on this handle: inside one, statements need no savepoint of their own. */
  depth = 0

  constructor(readonly lent: LentConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.depth > 0) return this.lent.executeQuery<R>(query)
    await this.lent.begin()
    try {
      const result = await this.lent.executeQuery<R>(query)
      await this.lent.commit()
      return result
    } catch (err) {
      await this.lent.rollback()
      throw err
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.lent.streamQuery<R>(query, chunkSize)
  }
}

class Unit implements UnitOfWork {
  readonly db: Db
  readonly autonomous: Db
  /** The connection of the unit's transaction, once begun. */
  lent: LentConnection | null = null
  /** What gives the transaction's connection back to the pool. */
  held: Held | null = null
  ended = false

  constructor(
    readonly shared: SharedDriver,
    dialect: Dialect,
    root: Db,
  ) {
    this.db = handleOver(root, dialect, new UnitDriver(this, 'unit'))
    this.autonomous = shared.single
      ? handleOver(root, dialect, new UnitDriver(this, 'autonomous'))
      : root
  }

  get begun(): boolean {
    return this.lent !== null
  }

  /** Begins the unit's transaction on `held` (the connection the first `withTx` acquired). */
  async begin(held: Held): Promise<LentConnection> {
    await this.shared.inner.beginTransaction(held.connection, {})
    this.held = held
    this.lent = new LentConnection(held.connection)
    return this.lent
  }

  async commit(last?: (db: Db) => Promise<unknown>): Promise<void> {
    try {
      // Through `db`: in the unit's transaction once begun; else on its own (or beginning the unit, by a `withTx`).
      if (last) await last(this.db)
      this.ended = true
      if (this.held) await this.shared.inner.commitTransaction(this.held.connection)
    } catch (err) {
      await this.end(false)
      throw err
    }
    await this.end(true)
  }

  rollback(): Promise<void> {
    return this.end(false)
  }

  private async end(committed: boolean): Promise<void> {
    this.ended = true
    const held = this.held
    if (!held) return
    this.lent = null
    this.held = null
    try {
      if (!committed) await this.shared.inner.rollbackTransaction(held.connection).catch(() => {})
    } finally {
      await this.shared.release(held)
    }
  }
}

/**
 * The driver of a unit's handles. `unit`: before the unit begins, pooled connections (the first `withTx`
 * begins the unit on its connection and keeps it); after, the unit's connection. `autonomous` (embedded
 * database only): pooled connections, or the unit's under a savepoint per statement while it holds the one.
 */
class UnitDriver implements Driver {
  private readonly held = new WeakMap<DatabaseConnection, Held>()

  constructor(
    private readonly unit: Unit,
    private readonly role: 'unit' | 'autonomous',
  ) {}

  init(): Promise<void> {
    return this.unit.shared.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const { lent } = this.unit
    if (lent) return this.role === 'unit' ? lent : new SavepointedConnection(lent)
    const held = await this.unit.shared.acquire()
    this.held.set(held.connection, held)
    return held.connection
  }

  async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    if (connection instanceof LentConnection) return connection.begin()
    if (connection instanceof SavepointedConnection) {
      connection.depth++
      return connection.lent.begin()
    }
    const held = this.held.get(connection)!
    if (this.role === 'autonomous' || this.unit.ended || this.unit.lent) {
      return this.unit.shared.inner.beginTransaction(connection, settings)
    }
    // The unit's first transaction: the unit begins on this connection and keeps it until it ends.
    this.held.delete(connection)
    const lent = await this.unit.begin(held)
    return lent.begin()
  }

  private lentFor(connection: DatabaseConnection): LentConnection | null {
    if (connection instanceof LentConnection) return connection
    if (connection instanceof SavepointedConnection) {
      connection.depth--
      return connection.lent
    }
    // The connection the unit began on: the `withTx` that began it is the unit's first savepoint.
    return connection === this.unit.held?.connection ? this.unit.lent : null
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lent = this.lentFor(connection)
    return lent ? lent.commit() : this.unit.shared.inner.commitTransaction(connection)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lent = this.lentFor(connection)
    return lent ? lent.rollback() : this.unit.shared.inner.rollbackTransaction(connection)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const held = this.held.get(connection)
    if (!held) return // the unit's connection (or a savepointed view of it): the unit's end releases it
    this.held.delete(connection)
    await this.unit.shared.release(held)
  }

  async destroy(): Promise<void> {}
}

/** Acquires and releases through a unit's driver, as Kysely's own provider does through a dialect's. */
class UnitConnectionProvider implements ConnectionProvider {
  constructor(private readonly driver: UnitDriver) {}

  async provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    const connection = await this.driver.acquireConnection()
    try {
      return await consumer(connection)
    } finally {
      await this.driver.releaseConnection(connection)
    }
  }
}

/**
 * A handle sending the root's compiled queries through `driver`: the root's executor with another connection
 * provider, as Kysely's own transactions are made (a few objects, where a new Kysely instance builds its
 * compiler, adapter and runtime driver afresh: a unit is opened per keyed request).
 */
function handleOver(root: Db, dialect: Dialect, driver: UnitDriver): Db {
  const executor = root.getExecutor().withConnectionProvider(new UnitConnectionProvider(driver))
  return new Kysely<Database>({ config: { dialect }, dialect, driver, executor })
}

/** The dialect of a handle over `driver`, compiling and adapting as the database's own dialect does. */
function unitDialect(inner: Dialect, driver: Driver): Dialect {
  return {
    createDriver: () => driver,
    createQueryCompiler: () => inner.createQueryCompiler(),
    createAdapter: () => multiConnectionAdapter(inner),
    createIntrospector: (db) => inner.createIntrospector(db),
  }
}

/** The dialect's adapter, told that connections may be many: the shared driver serializes a single one itself. */
function multiConnectionAdapter(inner: Dialect): DialectAdapter {
  const adapter = inner.createAdapter()
  return Object.create(adapter, { supportsMultipleConnections: { get: () => true } })
}

/** Per root handle: its shared driver and dialect, from which its units are made. */
const sources = new WeakMap<Db, { shared: SharedDriver; dialect: Dialect }>()

/**
 * The root handle of a database (`single`: it has one connection, as the embedded database does). Units of
 * work opened from it (`openUnit`) share its connections.
 */
export function openRootHandle(dialect: Dialect, single: boolean): Db {
  const shared = new SharedDriver(dialect.createDriver(), single)
  const db = new Kysely<Database>({ dialect: unitDialect(dialect, new RootDriver(shared)) })
  sources.set(db, { shared, dialect })
  return db
}

/** A new unit of work on the database of `root` (a handle from `openRootHandle`). */
export function openUnit(root: Db): UnitOfWork {
  const source = sources.get(root)
  if (!source) throw new Error('openUnit needs the root handle of a database (openRootHandle).')
  return new Unit(source.shared, source.dialect, root)
}
