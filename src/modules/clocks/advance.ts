import type { AppDeps } from '../../app-deps.js'
import { dueJobsOnClock, runJobOnClock } from '../../jobs/clock-jobs.js'
import { atTime } from '../../lib/object-clock.js'
import {
  ESIM_VALIDITY_ON_CLOCK,
  HOLD_EXPIRY_ON_CLOCK,
  SETTLEMENT_ON_CLOCK,
  type ClockSweep,
  type DueOnClock,
} from './hooks.js'

/**
 * How many due objects each sweep is asked for at a time. Large enough that a round gives each account a run of its
 * holds to expire together (10,000 holds of 100 accounts: some 20 an account a round).
 */
const PAGE = 2_000
/**
 * How many objects of different keys (`DueOnClock.key`) run side by side. One: with an account's holds expiring
 * together (a few statements for a run of them) the advance is no longer bound by round trips, and one connection at
 * a time leaves the database's other cores to the requests of other organizations (bench/README.md, "Sandbox
 * clocks": on 2 cores, 8 side by side was both slower and harder on them).
 */
const SIDE_BY_SIDE = 1

/**
 * What falls due under a clock, in the order the decision lists it for one instant: hold expiry, settlement,
 * card expiry, KYC expiry, 3-D Secure expiry, eSIM validity and alerts, auto top-ups; other jobs last.
 */
const JOB_RANK: Record<string, number> = {
  'card.expire': 2,
  'kyc.expiry': 3,
  'authentication.expire': 4,
  'esim.auto_top_up': 6,
}
const OTHER_JOBS = 7

interface Due {
  at: Date
  rank: number
  id: string
  key?: string
  run: () => Promise<boolean>
  /** The sweep's `runMany` for a queue of one key, when it has one (`sweep`: whose, for its run limit). */
  runMany?: { sweep: ClockSweep; run: (dues: readonly DueOnClock[]) => Promise<number> }
}

/**
 * Objects of one key a sweep's `runMany` takes in one transaction, unless the sweep says (`ClockSweep.runLimit`). A
 * request of another organization that arrives while a transaction of the advance runs waits behind it for the
 * process's event loop and the database's cores, so a run's length is what it can add to their latency
 * (bench/README.md, "Sandbox clocks": an account's 100 holds in one transaction, some 40 ms, doubled their p99; runs of
 * 25, some 9 ms, raised it by a third to a half; runs sized down to one hold, 5 ms, left it level but took the advance
 * of 10,000 holds from 18 s to 117 s, a transaction's fixed part being most of its time).
 */
const RUN_LIMIT = 25

/**
 * How long the advance rests after each of its transactions, for each unit of time the transaction took. At 1 it takes
 * at most half the time of its connection (and of the process's event loop), so requests of other organizations served
 * beside it keep more of their latency (bench/README.md, "Sandbox clocks": without the rest, their p99 rose by some
 * 75 % on 2 busy cores).
 */
const REST_PER_WORK = 1

/** Runs one transaction of the advance, then rests (`REST_PER_WORK`). */
async function paced<T>(work: () => Promise<T>): Promise<T> {
  const start = performance.now()
  const result = await work()
  const rest = (performance.now() - start) * REST_PER_WORK
  if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest))
  return result
}

/**
 * Runs a round's objects in its order, answering how many moved. A stretch of one sweep's keyed objects runs as
 * one queue per key (each in time order), SIDE_BY_SIDE queues at a time: objects of different keys are independent
 * (a hold expiry locks its own account), so only the order within a key is kept. Everything else runs one by one.
 */
async function runRound(round: readonly Due[]): Promise<number> {
  let moved = 0
  for (let i = 0; i < round.length; ) {
    const first = round[i]!
    if (first.key === undefined) {
      if (await paced(first.run)) moved++
      i++
      continue
    }
    let end = i
    while (end < round.length && round[end]!.rank === first.rank && round[end]!.key !== undefined)
      end++
    const queues = new Map<string, Due[]>()
    for (const due of round.slice(i, end)) {
      const queue = queues.get(due.key!)
      if (queue) queue.push(due)
      else queues.set(due.key!, [due])
    }
    const pending = [...queues.values()]
    await Promise.all(
      Array.from({ length: Math.min(SIDE_BY_SIDE, pending.length) }, async () => {
        for (let queue = pending.shift(); queue; queue = pending.shift()) {
          const many = queue[0]!.runMany
          if (many) {
            const limit = many.sweep.runLimit ?? RUN_LIMIT
            for (let k = 0; k < queue.length; k += limit) {
              const run = queue.slice(k, k + limit).map(({ id, at, key }) => ({ id, at, key }))
              moved += await paced(() => many.run(run))
            }
          } else for (const due of queue) if (await paced(due.run)) moved++
        }
      }),
    )
    i = end
  }
  return moved
}

/**
 * Runs everything under clock `clockId` that falls due up to `until`, earliest first, each with the dependencies'
 * clock reading its due time: asks every sweep (and the clock's jobs) for a page of what is due, merges them, and
 * runs them up to the earliest time where a page was cut (what lies beyond may interleave with another sweep's next
 * page), then asks again. Work that a run makes due (an auto top-up, a job retried later) is found by the next ask.
 * Answers how many objects moved. Stops when a whole round moved nothing (everything left is held by another
 * advance running alongside, or failed: failures are logged, and the job stays for the next advance).
 */
export async function runDueOnClock(deps: AppDeps, clockId: string, until: Date): Promise<number> {
  const sweeps: [number, ClockSweep][] = [
    [0, deps.hooks.get(HOLD_EXPIRY_ON_CLOCK)],
    [1, deps.hooks.get(SETTLEMENT_ON_CLOCK)],
    [5, deps.hooks.get(ESIM_VALIDITY_ON_CLOCK)],
  ]
  let moved = 0
  for (;;) {
    // One ask at a time, each paced like a transaction: asked side by side, the four reads of a page each were a
    // burst that the requests beside the advance's first moments waited behind.
    const pages: Due[][] = []
    for (const [rank, sweep] of sweeps)
      pages.push(
        await paced(async () =>
          (await sweep.due(deps, clockId, until, PAGE)).map(
            (d): Due => ({
              at: d.at,
              rank,
              id: d.id,
              key: d.key,
              run: () => sweep.run(atTime(deps, d.at), clockId, d.id),
              runMany: sweep.runMany && {
                sweep,
                run: (dues: readonly DueOnClock[]) => sweep.runMany!(deps, clockId, dues),
              },
            }),
          ),
        ),
      )
    pages.push(
      await paced(async () =>
        (await dueJobsOnClock(deps.db, clockId, until, new Date(), PAGE)).map(
          (j): Due => ({
            at: j.at,
            rank: JOB_RANK[j.type] ?? OTHER_JOBS,
            id: j.id,
            run: () => runJobOnClock(deps, deps.jobHandlers, j.id),
          }),
        ),
      ),
    )
    const cut = Math.min(
      ...pages.filter((p) => p.length >= PAGE).map((p) => p[p.length - 1]!.at.getTime()),
    )
    const round = pages
      .flat()
      .filter((d) => d.at.getTime() <= cut)
      .sort(
        (a, b) =>
          a.at.getTime() - b.at.getTime() ||
          a.rank - b.rank ||
          (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      )
    if (round.length === 0) return moved
    const movedNow = await runRound(round)
    if (movedNow === 0) return moved
    moved += movedNow
  }
}
