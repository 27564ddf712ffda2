import type { AppDeps } from '../app-deps.js'
import type { JobRegistry } from './registry.js'
import { JobRunner, type RunnerOptions } from './runner.js'
import { ensureSchedules } from './schedules.js'

export interface WorkerHandle {
  runner: JobRunner
  stop(): Promise<void>
}

/**
 * Background work of a node: runs in `svc worker`, and inside `svc serve` unless SVC_DISABLE_WORKER is set.
 * The registry (built by the runtime from `MODULES`) holds every handler; recurring work (housekeeping,
 * sweeps) is a self-rescheduling job, so it runs on one worker at a time however many there are.
 */
export function startWorker(
  deps: AppDeps,
  registry: JobRegistry,
  options: RunnerOptions = {},
): WorkerHandle {
  const runner = new JobRunner(deps, registry, options)
  const ready = ensureSchedules(deps, registry).catch((err) =>
    deps.log.error({ err }, 'schedules not registered'),
  )
  void ready.then(() => runner.start())
  return {
    runner,
    async stop() {
      await ready
      await runner.stop()
    },
  }
}
