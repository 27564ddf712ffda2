import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely'

/**
 * Kysely over the embedded PGlite database: its one session is the one connection. Access is serialized
 * by the shared driver that wraps this one (`unit-of-work.ts`), so this driver adds no lock of its
 * own: a transaction is plain BEGIN … COMMIT on the session, savepoints plain SAVEPOINT statements.
 * Kept here (rather than Kysely's own, which needs Node 22) so the service runs on Node 20.
 */
class PgliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, affectedRows } = await this.pglite.query<R>(
      query.sql,
      query.parameters as unknown[],
      { rowMode: 'object' },
    )
    return {
      rows: rows ?? [],
      numAffectedRows:
        affectedRows === undefined || affectedRows === null ? undefined : BigInt(affectedRows),
    }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not stream query results.')
  }
}

class PgliteDriver implements Driver {
  private readonly connection: PgliteConnection

  constructor(private readonly pglite: PGlite) {
    this.connection = new PgliteConnection(pglite)
  }

  async init(): Promise<void> {
    await this.pglite.waitReady
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN'))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'))
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`SAVEPOINT ${quoteName(name)}`))
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`ROLLBACK TO SAVEPOINT ${quoteName(name)}`))
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`RELEASE SAVEPOINT ${quoteName(name)}`))
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close()
  }
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** PostgreSQL's adapter, without the migration lock: the one session is the migrator's for the whole run. */
class PgliteAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

export function pgliteDialect(pglite: PGlite): Dialect {
  return {
    createDriver: () => new PgliteDriver(pglite),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createAdapter: () => new PgliteAdapter(),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
  }
}
