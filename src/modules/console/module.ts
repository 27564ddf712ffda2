import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { ServiceModule } from '../module.js'
import { CONSOLE_PAGES } from './pages/index.js'
import { registerPlaceholders } from './pages/placeholders.js'
import { mountConsole } from './router.js'

/** The management console at /console: server-rendered pages over the same services as the API. */
export const consoleModule: ServiceModule = {
  name: 'console',
  routes: (app: FastifyInstance, deps: AppDeps) =>
    mountConsole(app, deps, CONSOLE_PAGES, registerPlaceholders),
}
