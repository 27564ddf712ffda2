import { ApiError } from '../http/errors.js'
import { PROCESSORS } from './catalog.js'
import type {
  Processor,
  ProcessorDefinition,
  ProcessorDeps,
  ProcessorProfile,
  SimulatorFeed,
} from './port.js'

/**
 * The processors this deployment serves, by the name programs are bound to: each one's definition and
 * the adapter built from it. A pure function of the list it is given; nothing registers later.
 */
export class ProcessorRegistry {
  private readonly entries: ReadonlyMap<
    string,
    { definition: ProcessorDefinition; adapter: Processor }
  >

  constructor(
    private readonly processors: readonly ProcessorDefinition[],
    private readonly deps: ProcessorDeps,
  ) {
    const entries = new Map<string, { definition: ProcessorDefinition; adapter: Processor }>()
    for (const definition of processors) {
      const { name } = definition.profile
      if (entries.has(name)) throw new Error(`Processor ${name} is listed twice.`)
      const adapter = definition.create(deps)
      if (adapter.name !== name)
        throw new Error(`Processor ${name} built an adapter named ${adapter.name}.`)
      entries.set(name, { definition, adapter })
    }
    this.entries = entries
  }

  /**
   * The same processors keeping their simulators' records through `db` (a request's autonomous handle on the
   * embedded database, `http/idempotency.ts` `bindUnit`).
   */
  onDatabase(db: ProcessorDeps['db']): ProcessorRegistry {
    return db === this.deps.db ? this : new ProcessorRegistry(this.processors, { ...this.deps, db })
  }

  has(name: string): boolean {
    return this.entries.has(name)
  }

  /** The names a program can be bound to, in list order. */
  names(): string[] {
    return [...this.entries.keys()]
  }

  /** The traits a program bound to `name` inherits; undefined for a processor this deployment does not have. */
  profile(name: string): ProcessorProfile | undefined {
    return this.entries.get(name)?.definition.profile
  }

  /** The sandbox feeds `name` can inject (none for a processor this deployment does not have). */
  simulatorFeeds(name: string): readonly SimulatorFeed[] {
    return this.entries.get(name)?.definition.simulatorFeeds ?? []
  }

  /** The adapter behind a program; a program this deployment cannot serve is `program_not_provisioned`. */
  forProgram(program: { id: string; processor: string }): Processor {
    const entry = this.entries.get(program.processor)
    if (!entry) {
      throw new ApiError('program_not_provisioned', {
        param: 'program_id',
        message: `Program ${program.id} cannot be served by this deployment.`,
      })
    }
    return entry.adapter
  }
}

/** The adapters of `processors` (by default every listed one, `PROCESSORS`), sharing the service's database for the simulators' records. */
export function createProcessorRegistry(
  deps: ProcessorDeps,
  processors: readonly ProcessorDefinition[] = PROCESSORS,
): ProcessorRegistry {
  return new ProcessorRegistry(processors, deps)
}
