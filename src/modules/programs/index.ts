/** What the programs module publishes to other modules: they import it only through this file. */
export {
  countCallerPrograms, createProgram, findProgram, findPrograms, listOrganizationPrograms, listPlatformPrograms, listPrograms, presentProgram,
  requireCallerProgram,
} from './service.js'
export type { ProgramCreateInput, ProgramFilter, ProgramRow, ProgramView } from './service.js'
