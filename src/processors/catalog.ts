import type { ProcessorDefinition, ProcessorProfile } from './port.js'
import { simBasic } from './sim-basic.js'
import { simFull } from './sim-full.js'

export { ALL_CAPABILITIES, type ProcessorProfile } from './port.js'

/**
 * Every processor the service knows, each one object in its own file (`ProcessorDefinition`). The runtime
 * builds its adapters from this list unless given another (`openRuntime(config, { processors })`); what
 * follows derives from it for code that has no runtime at hand.
 */
export const PROCESSORS: readonly ProcessorDefinition[] = [simFull, simBasic]

export const PROCESSOR_PROFILES: Record<string, ProcessorProfile> = Object.fromEntries(
  PROCESSORS.map((p) => [p.profile.name, p.profile]),
)

export const PROCESSOR_NAMES: string[] = PROCESSORS.map((p) => p.profile.name)
