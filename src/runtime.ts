import type { Logger } from 'pino'
import type { AppDeps } from './app-deps.js'
import { databasePoolSize, type Config } from './config.js'
import { openDatabase, type DbHandle } from './db/client.js'
import { migrateToLatest } from './db/migrate.js'
import { SimulatedEsimNetwork } from './esim-network/simulator.js'
import { InFlightKeys } from './http/in-flight.js'
import { Cursors } from './http/pagination.js'
import { buildJobRegistry, type JobRegistry } from './jobs/registry.js'
import { systemClock, type Clock } from './lib/clock.js'
import { createLogger } from './lib/logger.js'
import { HookTable, StateTable } from './lib/slots.js'
import { MODULES } from './modules/index.js'
import type { ProcessorDefinition } from './processors/port.js'
import { createProcessorRegistry } from './processors/registry.js'

/** The composition root's output: the dependencies every route and job gets, the database, the worker's jobs. */
export interface Runtime {
  deps: AppDeps
  handle: DbHandle
  jobs: JobRegistry
}

/** What the runtime opens before building the services bound to the database. */
export type BaseDeps = Omit<AppDeps, 'esimNetwork' | 'hooks' | 'state' | 'jobHandlers'>

/**
 * Builds the collaborators bound to `base.db`, once: the eSIM network, the hooks the modules answer, and each
 * module's state (its group commits — ledger adjustments, authorization decisions, webhook deliveries — and
 * its caches). A test that runs a second node on another pool calls it with that pool
 * (`buildServices({ ...t.deps, db })`), so the node commits its own batches on its own connections.
 */
export function buildServices(base: BaseDeps): AppDeps {
  const deps = { ...base } as AppDeps
  deps.esimNetwork = new SimulatedEsimNetwork(base.db, base.clock)
  deps.hooks = new HookTable(MODULES)
  deps.jobHandlers = buildJobRegistry(MODULES).handlers
  deps.state = new StateTable<AppDeps>()
  deps.state.build(
    MODULES.flatMap((m) => m.states ?? []),
    deps,
  )
  return deps
}

/**
 * Opens the database, applies migrations and assembles the dependencies shared by server, worker and tests.
 * `inMemory` keeps an embedded database in memory, started from `pgliteImage` when given (tests start from one
 * migrated image instead of initialising and migrating a cluster each).
 * `processors` replaces the list of processors served (default `PROCESSORS`, src/processors/catalog.ts).
 */
export async function openRuntime(
  config: Config,
  options: {
    clock?: Clock
    log?: Logger
    inMemory?: boolean
    pgliteImage?: Blob
    processors?: readonly ProcessorDefinition[]
  } = {},
): Promise<Runtime> {
  const log = options.log ?? createLogger(config.logLevel)
  const handle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: options.inMemory ? null : `${config.dataDir}/pgdata`,
    poolSize: databasePoolSize(config),
    pgliteImage: options.pgliteImage,
  })
  await migrateToLatest(handle.db)
  const clock = options.clock ?? systemClock
  const inFlight = new InFlightKeys(config.databaseUrl)
  const close = handle.close
  handle.close = async () => {
    await inFlight.close()
    await close()
  }
  const deps = buildServices({
    config,
    db: handle.db,
    clock,
    log,
    cursors: new Cursors(config.masterKey, clock),
    inFlight,
    processors: createProcessorRegistry(
      { db: handle.db, clock, masterKey: config.masterKey },
      options.processors,
    ),
  })
  return { handle, deps, jobs: buildJobRegistry(MODULES) }
}
