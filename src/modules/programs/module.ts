import type { ServiceModule } from '../module.js'
import { registerPrograms } from './routes.js'

export const programsModule: ServiceModule = { name: 'programs', routes: registerPrograms }
