/** What the programs module publishes to other modules: they import it only through this file. */
export {
  countCallerPrograms,
  createProgram,
  findProgram,
  findPrograms,
  getProgram,
  listOrganizationPrograms,
  listPlatformPrograms,
  listPrograms,
  presentProgram,
  requireCallerProgram,
  updateProgram,
} from './service.js'
export { programsCte } from './read-plan.js'
export { ForeignSpend, FxFee, FxMarkupBps } from './schemas.js'
export type {
  ProgramCreateInput,
  ProgramFilter,
  ProgramFxSettings,
  ProgramRow,
  ProgramUpdateInput,
  ProgramView,
} from './service.js'
