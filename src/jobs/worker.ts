import type { AppDeps } from '../app-deps.js'
import '../modules/index.js'
import './housekeeping.js'
import { JobRunner, type RunnerOptions } from './runner.js'
import { ensureSchedules } from './schedules.js'

export interface WorkerHandle {
  runner: JobRunner
  stop(): Promise<void>
}

/**
 * Background work of a node: runs in `svc worker`, and inside `svc serve` unless SVC_DISABLE_WORKER is set.
 * Every module's job handlers are registered by importing the module list; recurring work (housekeeping,
 * event purge) is a self-rescheduling job, so it runs on one worker at a time however many there are.
 */
export function startWorker(deps: AppDeps, options: RunnerOptions = {}): WorkerHandle {
  const runner = new JobRunner(deps, options)
  const ready = ensureSchedules(deps).catch((err) => deps.log.error({ err }, 'schedules not registered'))
  void ready.then(() => runner.start())
  return {
    runner,
    async stop() {
      await ready
      await runner.stop()
    },
  }
}
