import type { ServiceModule } from '../module.js'
import { registerDocs } from './routes.js'

/** The rendered API reference and the error catalogue (`/docs`). */
export const docsModule: ServiceModule = { name: 'docs', routes: (app) => registerDocs(app) }
