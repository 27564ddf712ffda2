/** What the programs module publishes to other modules: they import it only through this file. */
export { countCallerPrograms, createProgram, findProgram, findPrograms, listOrganizationPrograms, listPrograms, presentProgram, requireCallerProgram } from './service.js'
export type { ProgramRow, ProgramView } from './service.js'
