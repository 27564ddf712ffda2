import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Db } from './db/types.js'
import type { EsimNetwork } from './esim-network/port.js'
import type { InFlightKeys } from './http/in-flight.js'
import type { Cursors } from './http/pagination.js'
import type { BoundedCache } from './lib/bounded-cache.js'
import type { Clock } from './lib/clock.js'
import type { DecisionBatcher } from './modules/authorizations/batcher.js'
import type { CachedAuthorizationEndpoint, CircuitState } from './modules/authorizations/integrator.js'
import type { AdjustmentBatcher } from './modules/ledger/batcher.js'
import type { Hooks } from './modules/module.js'
import type { DeliveryCoalescers } from './modules/webhooks/delivery.js'
import type { ProcessorRegistry } from './processors/registry.js'

/** The group commits of a node: one of each per database handle, built by `buildServices` (runtime.ts). */
export interface Batchers {
  /** Credits and debits (`ledger/batcher.ts`). */
  adjustments: AdjustmentBatcher
  /** Authorization decisions (`authorizations/batcher.ts`). */
  decisions: DecisionBatcher
  /** Webhook delivery claims and outcomes (`webhooks/delivery.ts`). */
  deliveries: DeliveryCoalescers
}

/** Per-process caches, built once by the runtime (`buildServices`) so no module keeps one of its own. */
export interface Caches {
  /** The organization, environment and program of an account in a path, for capability mounting (never change). */
  accountMounts: BoundedCache<string, AccountMount>
  /** Each program's capabilities (null: no such program), for capability mounting; a few seconds. */
  programCapabilities: BoundedCache<string, { capabilities: Promise<string[] | null>; until: number }>
  /** Webhook signing secrets, decrypted once per sealed value. */
  webhookSecrets: BoundedCache<string, string>
  /** Each scope's authorization endpoint, or that it has none, for a few seconds; PUT, DELETE and rotate_secret clear their scope's entry. */
  authorizationEndpoints: BoundedCache<string, CachedAuthorizationEndpoint>
  /** The circuit breaker of each scope's authorization endpoint (consecutive stand-ins, open until): per process. */
  authorizationCircuits: BoundedCache<string, CircuitState>
}

export interface AccountMount { organization_id: string; environment: string; program_id: string }

/**
 * What every module's routes, services and jobs are built from; one object, passed explicitly. Built
 * once by the runtime (`openRuntime`, `buildServices`): no module keeps a collaborator of its own.
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
  batchers: Batchers
  /** The eSIM provisioning network (the simulator, keeping its records in `db`). */
  esimNetwork: EsimNetwork
  /** What lower modules ask of higher ones (card lists, the address-change rule), joined from `MODULES`. */
  hooks: Hooks
  caches: Caches
}
