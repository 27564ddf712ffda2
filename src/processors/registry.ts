import { ApiError } from '../http/errors.js'
import type { Processor } from './port.js'
import { createSimBasic } from './sim-basic.js'
import { createSimFull } from './sim-full.js'
import type { SimDeps } from './sim-processor.js'

/** The processor adapters this deployment can serve, by the name programs are bound to. */
export class ProcessorRegistry {
  private readonly adapters = new Map<string, Processor>()

  register(processor: Processor): void {
    this.adapters.set(processor.name, processor)
  }

  has(name: string): boolean {
    return this.adapters.has(name)
  }

  /** The adapter behind a program; a program this deployment cannot serve is `program_not_provisioned`. */
  forProgram(program: { id: string; processor: string }): Processor {
    const adapter = this.adapters.get(program.processor)
    if (!adapter) {
      throw new ApiError('program_not_provisioned', { param: 'program_id', message: `Program ${program.id} cannot be served by this deployment.` })
    }
    return adapter
  }
}

/** Both simulated processors, sharing the service's database for their own records. */
export function createProcessorRegistry(deps: SimDeps): ProcessorRegistry {
  const registry = new ProcessorRegistry()
  registry.register(createSimFull(deps))
  registry.register(createSimBasic(deps))
  return registry
}
