import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import type { JobSource } from '../jobs/registry.js'
import { defineState, type HookAnswer, type StateKey } from '../lib/slots.js'

/** A module's state for one runtime, built from the runtime's dependencies. */
export type ModuleState<T> = StateKey<T, AppDeps>

/** Declares a module's state: built once per runtime (per database handle), in `MODULES` order. */
export function moduleState<T>(name: string, create: (deps: AppDeps) => T): ModuleState<T> {
  return defineState(name, create)
}

/**
 * One module of the service, as `MODULES` lists it: its routes (mounted in list order), its job handlers
 * by type, its recurring work, the state it keeps and the hooks it answers. Nothing here runs when the module
 * is imported.
 */
export interface ServiceModule extends JobSource {
  routes?(app: FastifyInstance, deps: AppDeps): void | Promise<void>
  /** The hooks this module answers (each declared by the module that asks it). */
  hooks?: readonly HookAnswer[]
  /** What this module keeps for the life of a runtime (its group commits, its caches). */
  states?: readonly ModuleState<unknown>[]
}
