import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import { registerOauth } from './oauth/routes.js'
import { registerOperator } from './operator/routes.js'
import { registerPrograms } from './programs/routes.js'

export type ModuleRegistration = (app: FastifyInstance, deps: AppDeps) => void | Promise<void>

/** Every module of the service, mounted in this order. */
export const MODULES: ModuleRegistration[] = [
  registerOauth,
  registerOperator,
  registerPrograms,
]
