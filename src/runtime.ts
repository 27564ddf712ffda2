import type { Logger } from 'pino'
import type { AppDeps } from './app-deps.js'
import { databasePoolSize, type Config } from './config.js'
import { openDatabase, type DbHandle } from './db/client.js'
import { migrateToLatest } from './db/migrate.js'
import { InFlightKeys } from './http/in-flight.js'
import { Cursors } from './http/pagination.js'
import { systemClock, type Clock } from './lib/clock.js'
import { createLogger } from './lib/logger.js'
import { createProcessorRegistry } from './processors/registry.js'

export interface Runtime { deps: AppDeps; handle: DbHandle }

/** Opens the database, applies migrations and assembles the dependencies shared by server, worker and tests. */
export async function openRuntime(config: Config, options: { clock?: Clock; log?: Logger; inMemory?: boolean } = {}): Promise<Runtime> {
  const log = options.log ?? createLogger(config.logLevel)
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: options.inMemory ? null : `${config.dataDir}/pgdata`, poolSize: databasePoolSize(config) })
  await migrateToLatest(handle.db)
  const clock = options.clock ?? systemClock
  const inFlight = new InFlightKeys(config.databaseUrl)
  const close = handle.close
  handle.close = async () => { await inFlight.close(); await close() }
  return {
    handle,
    deps: {
      config, db: handle.db, clock, log, cursors: new Cursors(config.masterKey, clock), inFlight,
      processors: createProcessorRegistry({ db: handle.db, clock, masterKey: config.masterKey }),
    },
  }
}
