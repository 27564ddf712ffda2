import type { AppDeps } from '../app-deps.js'
import { runHousekeeping } from './housekeeping.js'

export interface WorkerHandle { stop(): Promise<void> }

/** Background work of a node: runs in `svc worker`, and inside `svc serve` unless SVC_DISABLE_WORKER is set. */
export function startWorker(deps: AppDeps, options: { housekeepingMs?: number } = {}): WorkerHandle {
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  const tick = () => {
    if (stopped) return
    running = runHousekeeping(deps).catch((err) => deps.log.error({ err }, 'housekeeping failed'))
  }
  const timer = setInterval(tick, options.housekeepingMs ?? 60_000)
  timer.unref()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
