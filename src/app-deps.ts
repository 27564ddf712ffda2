import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Db } from './db/types.js'
import type { InFlightKeys } from './http/in-flight.js'
import type { Cursors } from './http/pagination.js'
import type { Clock } from './lib/clock.js'
import type { ProcessorRegistry } from './processors/registry.js'

/** What every module's routes and services are built from; one object, passed explicitly. */
export interface AppDeps {
  config: Config
  db: Db
  clock: Clock
  log: Logger
  cursors: Cursors
  processors: ProcessorRegistry
  /** The Idempotency-Keys whose requests run now (a lock that dies with the process). */
  inFlight: InFlightKeys
}
