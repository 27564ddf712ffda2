import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Db } from './db/types.js'
import type { EsimNetwork } from './esim-network/port.js'
import type { InFlightKeys } from './http/in-flight.js'
import type { RequestUnit } from './http/request-unit.js'
import type { Cursors } from './http/pagination.js'
import type { JobHandler } from './jobs/queue.js'
import type { Clock } from './lib/clock.js'
import type { HookTable, StateTable } from './lib/slots.js'
import type { ProcessorRegistry } from './processors/registry.js'

/**
 * What every module's routes, services and jobs are built from; one object, passed explicitly. Built
 * once by the runtime (`openRuntime`, `buildServices`): no module keeps a collaborator of its own. It names
 * no module: what a module keeps (its group commits, its caches) is its own state, declared in the module and
 * built here once per runtime (`state.of(KEY)`); what a lower module asks of a higher one is a hook declared
 * by the asker (`hooks.get(HOOK)`).
 */
export interface AppDeps {
  config: Config
  db: Db
  clock: Clock
  log: Logger
  cursors: Cursors
  processors: ProcessorRegistry
  /** The Idempotency-Keys whose requests run now (a lock that dies with the process). */
  inFlight: InFlightKeys
  /** The eSIM provisioning network (the simulator, keeping its records in `db`). */
  esimNetwork: EsimNetwork
  /** What lower modules ask of higher ones (card lists, the address-change rule, …), answered by `MODULES`. */
  hooks: HookTable
  /** Each module's state for this runtime (group commits bound to `db`, per-process caches). */
  state: StateTable<AppDeps>
  /** Every job type's handler, from the modules (the sandbox clocks' advance runs its jobs with them). */
  jobHandlers: ReadonlyMap<string, JobHandler>
  /**
   * Present when these are one request's dependencies (`unitOf`): its unit of work, whose handle is `db`, and
   * its Idempotency-Key. Absent for the process's own (jobs, batches, requests without a key).
   */
  unit?: RequestUnit
}
