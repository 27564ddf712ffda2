import { PROGRAM_SCOPE } from '../../http/ownership.js'
import { answer } from '../../lib/slots.js'
import type { ServiceModule } from '../module.js'
import { findProgram } from './repo.js'
import { registerPrograms } from './routes.js'

/** Programs; answers the list filters' lookup of a program_id. */
export const programsModule: ServiceModule = {
  name: 'programs',
  routes: registerPrograms,
  hooks: [answer(PROGRAM_SCOPE, findProgram)],
}
