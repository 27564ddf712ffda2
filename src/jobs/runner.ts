import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import type { JobOutcome, JobRecord } from './queue.js'
import type { JobRegistry } from './registry.js'
import { listenForJobs, type WakeSource } from './wakeup.js'

export interface RunnerOptions {
  /** Most jobs claimed by one statement. */
  batchSize?: number
  /** Most jobs running at once (deliveries wait on the network, so this is high). */
  concurrency?: number
  /** Poll interval while idle; work found or a NOTIFY starts the next claim at once. */
  idleMs?: number
  /** How long a claim holds a job; a worker that dies leaves it due again after this. */
  leaseMs?: number
  /** Listen for PostgreSQL notifications (default: when the database is PostgreSQL). */
  listen?: boolean
}

/** A job as claimed: the record a handler sees plus the claim that must still hold when it finishes. */
export interface ClaimedJob extends JobRecord {
  claim: string
}

/** Attempts after which a job whose handler keeps throwing is parked as `dead` (kept 30 days for inspection, `dead-jobs.ts`). */
export const MAX_JOB_ERRORS = 25

/**
 * The durable job runner for every job type: claims due jobs with `FOR UPDATE SKIP LOCKED` (several
 * workers never take the same job), holds them under a lease (a killed worker's job becomes due again,
 * never lost), runs many at once and claims again immediately while work remains.
 */
export class JobRunner {
  readonly id = `run_${randomBytes(6).toString('hex')}`
  private readonly batchSize: number
  private readonly concurrency: number
  private readonly idleMs: number
  readonly leaseMs: number
  private readonly listen: boolean
  private readonly inFlight = new Set<Promise<void>>()
  private claims = 0
  private stopped = true
  private loopDone: Promise<void> = Promise.resolve()
  private wakeSource: WakeSource | null = null
  private wakePending = false
  private moreMayBeDue = false
  private readonly refillAt: number
  private wakeResolve: (() => void) | null = null
  private heartbeat: NodeJS.Timeout | null = null
  private readonly running = new Map<string, string>()
  private finished: {
    id: string
    claim: string
    resolve: () => void
    reject: (err: unknown) => void
  }[] = []

  constructor(
    private readonly deps: AppDeps,
    private readonly registry: JobRegistry,
    options: RunnerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 100
    this.concurrency = options.concurrency ?? 200
    this.idleMs = options.idleMs ?? 200
    this.leaseMs = options.leaseMs ?? 60_000
    this.listen = options.listen ?? deps.config.databaseUrl !== null
    this.refillAt = Math.max(1, Math.min(this.batchSize, Math.floor(this.concurrency / 2)))
  }

  /** Starts claiming in the background until `stop()`. */
  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.wakeSource = listenForJobs(
      this.listen ? this.deps.config.databaseUrl : null,
      this.deps.log,
      () => this.wake(),
    )
    this.heartbeat = setInterval(
      () => {
        void this.extendLeases()
      },
      Math.max(1000, Math.floor(this.leaseMs / 3)),
    )
    this.heartbeat.unref()
    this.loopDone = this.loop()
  }

  /** Stops claiming, lets running jobs finish, releases the notification connection. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.wake()
    await this.loopDone
    await Promise.allSettled([...this.inFlight])
    if (this.heartbeat) clearInterval(this.heartbeat)
    await this.wakeSource?.close()
    this.wakeSource = null
  }

  /** Claim now rather than at the next poll (a NOTIFY, a local enqueue, or freed slots). */
  wake(): void {
    this.wakePending = true
    const resolve = this.wakeResolve
    this.wakeResolve = null
    resolve?.()
  }

  /** Claims up to `limit` due jobs of the types this process can run, under a fresh lease. */
  async claim(limit: number): Promise<ClaimedJob[]> {
    const types = [...this.registry.handlers.keys()]
    if (types.length === 0 || limit <= 0) return []
    const now = this.deps.clock.now()
    const until = new Date(now.getTime() + this.leaseMs)
    const claim = `${this.id}.${++this.claims}`
    const { rows } = await sql<Omit<ClaimedJob, 'claim'>>`
      UPDATE jobs SET run_at = ${until}, locked_until = ${until}, locked_by = ${claim}, attempts = attempts + 1, updated_at = ${now}
      WHERE id IN (
        SELECT id FROM jobs
        WHERE state = 'queued' AND run_at <= ${now} AND type IN (${sql.join(types)})
        ORDER BY run_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, type, payload, organization_id, environment, attempts`.execute(this.deps.db)
    return rows.map((r) => ({ ...r, claim }))
  }

  /** Runs one claimed job and records its outcome (done, retry at, or error with backoff). */
  async run(job: ClaimedJob): Promise<void> {
    this.running.set(job.id, job.claim)
    try {
      const handler = this.registry.handlers.get(job.type)
      let outcome: JobOutcome
      try {
        if (!handler) throw new Error(`no handler for job type ${job.type}`)
        outcome = await handler(this.deps, job)
      } catch (err) {
        await this.failed(job, err)
        return
      }
      if (outcome && outcome.retryAt) await this.reschedule(job, outcome.retryAt)
      else await this.complete(job)
    } catch (err) {
      // Recording the outcome failed (database unreachable): the lease expires and the job runs again.
      this.deps.log.error({ err, job_id: job.id, job_type: job.type }, 'job outcome not recorded')
    } finally {
      this.running.delete(job.id)
    }
  }

  /** Claims one batch and runs it to the end; answers how many jobs ran (tests and `drain`). */
  async runDue(limit = this.batchSize): Promise<number> {
    const jobs = await this.claim(limit)
    await Promise.all(jobs.map((j) => this.run(j)))
    return jobs.length
  }

  /** Runs due jobs until none is left (jobs that reschedule themselves into the past stop after `maxRounds`). */
  async drain(maxRounds = 50): Promise<number> {
    let total = 0
    for (let round = 0; round < maxRounds; round++) {
      const n = await this.runDue()
      total += n
      if (n === 0) break
    }
    return total
  }

  /** Finished jobs are deleted together, one statement per turn of the event loop. */
  private complete(job: ClaimedJob): Promise<void> {
    return new Promise((resolve, reject) => {
      this.finished.push({ id: job.id, claim: job.claim, resolve, reject })
      if (this.finished.length === 1)
        setImmediate(() => {
          void this.flushFinished()
        })
    })
  }

  private async flushFinished(): Promise<void> {
    const batch = this.finished.splice(0, this.finished.length)
    if (batch.length === 0) return
    try {
      await sql`DELETE FROM jobs WHERE (id, locked_by) IN (${sql.join(batch.map((f) => sql`(${f.id}, ${f.claim})`))})`.execute(
        this.deps.db,
      )
      for (const f of batch) f.resolve()
    } catch (err) {
      for (const f of batch) f.reject(err)
    }
  }

  private async reschedule(job: ClaimedJob, at: Date): Promise<void> {
    await sql`UPDATE jobs SET run_at = ${at}, locked_by = NULL, locked_until = NULL, updated_at = ${this.deps.clock.now()}
      WHERE id = ${job.id} AND locked_by = ${job.claim}`.execute(this.deps.db)
  }

  private async failed(job: ClaimedJob, err: unknown): Promise<void> {
    const now = this.deps.clock.now()
    const message = err instanceof Error ? err.message : String(err)
    this.deps.log.error(
      { err, job_id: job.id, job_type: job.type, attempts: job.attempts },
      'job failed',
    )
    const dead = job.attempts >= MAX_JOB_ERRORS
    const retryAt = new Date(now.getTime() + Math.min(2 ** job.attempts, 3600) * 1000)
    await sql`UPDATE jobs SET state = ${dead ? 'dead' : 'queued'}, run_at = ${retryAt}, locked_by = NULL, locked_until = NULL,
      last_error = ${message.slice(0, 2000)}, updated_at = ${now}
      WHERE id = ${job.id} AND locked_by = ${job.claim}`.execute(this.deps.db)
  }

  /** Long jobs keep their lease while this process is alive. */
  private async extendLeases(): Promise<void> {
    if (this.running.size === 0) return
    const until = new Date(this.deps.clock.now().getTime() + this.leaseMs)
    const pairs = [...this.running.entries()]
    try {
      await sql`UPDATE jobs SET run_at = ${until}, locked_until = ${until}
        WHERE (id, locked_by) IN (${sql.join(pairs.map(([id, claim]) => sql`(${id}, ${claim})`))})`.execute(
        this.deps.db,
      )
    } catch (err) {
      this.deps.log.warn({ err }, 'job lease not extended')
    }
  }

  private launch(job: ClaimedJob): void {
    const p: Promise<void> = this.run(job).finally(() => {
      this.inFlight.delete(p)
      // Enough slots opened after claims that found work: claim the next chunk now rather than at the next poll.
      if (this.moreMayBeDue && this.concurrency - this.inFlight.size >= this.refillAt) this.wake()
    })
    this.inFlight.add(p)
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakePending) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeResolve = null
        resolve()
      }, ms)
      this.wakeResolve = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.wakePending = false
      const free = this.concurrency - this.inFlight.size
      // Refill in chunks: one claim statement per chunk of finished jobs, not one per job.
      if (free < this.refillAt) {
        await this.sleep(this.idleMs)
        continue
      }
      const want = Math.min(free, this.batchSize)
      let jobs: ClaimedJob[]
      try {
        jobs = await this.claim(want)
      } catch (err) {
        this.deps.log.error({ err }, 'job claim failed')
        await this.sleep(1000)
        continue
      }
      this.moreMayBeDue = jobs.length > 0
      for (const job of jobs) this.launch(job)
      // A full batch means more may be due: claim again at once; otherwise wait for a signal, a slot or the poll.
      if (jobs.length < want && !this.stopped) await this.sleep(this.idleMs)
    }
  }
}
