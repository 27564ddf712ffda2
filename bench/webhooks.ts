/**
 * Webhook delivery benchmark on PostgreSQL with two `svc worker` processes and a local receiver.
 *
 *   node --import tsx bench/webhooks.ts [--events 10000] [--latency-events 2000] [--rate 200]
 *
 * 1. Throughput: a backlog of N events (one subscribed endpoint) is written first; two worker processes
 *    start and drain it. Deliveries/s = N / (last receipt − first receipt).
 * 2. Latency: with the workers idle, events are emitted one per transaction at a steady rate; latency is
 *    receiver arrival − commit of the emitting transaction (same process, same clock). p50, p90, p99.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server; the bench
 * creates and drops a database of its own. Besides wall-clock figures it reports the CPU the two worker
 * processes and PostgreSQL spent per delivery (the cost holds up when other work shares the machine).
 * Figures are printed and saved to bench/results/webhooks-<time>.json.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { withTx } from '../src/db/tx.js'
import { newId } from '../src/lib/ids.js'
import { emit } from '../src/modules/events/emit.js'
import { insertEndpoint } from '../src/modules/webhooks/repo.js'
import { sealSecret } from '../src/modules/webhooks/secrets.js'
import { openRuntime } from '../src/runtime.js'
import { benchDatabaseUrl } from './platform-harness.js'

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}

const N = arg('events', 10_000)
const LATENCY_EVENTS = arg('latency-events', 2_000)
const RATE = arg('rate', 200)
const WORKERS = arg('workers', 2)
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CPU seconds (user + system) a process has used, from /proc/PID/stat. */
function cpuSeconds(pid: number): number {
  if (!existsSync(`/proc/${pid}/stat`)) return 0
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function main(): Promise<void> {
  const server = benchDatabaseUrl()
  const dbName = `svc_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${dbName}`)
  const url = new URL(server)
  url.pathname = `/${dbName}`
  const { DATABASE_URL: _ignored, ...inherited } = process.env
  const env: Record<string, string> = {
    ...(inherited as Record<string, string>),
    DATABASE_URL: url.toString(),
    BASE_URL: 'http://127.0.0.1:8080', // required with DATABASE_URL; nothing here calls it
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_OPERATOR_TOKEN: 'op_bench',
    WEBHOOK_URL_POLICY: 'allow_private',
    SVC_SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
  }
  const config = loadConfig(env)
  const { deps, handle } = await openRuntime(config)
  const workers: ChildProcess[] = []

  // The receiver: answers 200 at once and notes when each event arrived.
  const arrivals = new Map<string, number>()
  let duplicates = 0
  const workersCpu = () => workers.reduce((sum, w) => sum + cpuSeconds(w.pid!), 0)
  // The PostgreSQL backends serving this database (the workers' pools and LISTEN connections): the database's
  // share of the cost. Pools open and close connections, so backends are sampled and their last reading kept.
  const backendCpu = new Map<number, { first: number; last: number }>()
  let sampling: NodeJS.Timeout | null = null
  const sampleBackends = async (fresh: boolean) => {
    const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
      dbName,
    ])
    for (const { pid } of rows as { pid: number }[]) {
      const cpu = cpuSeconds(pid)
      const seen = backendCpu.get(pid)
      if (seen) seen.last = Math.max(seen.last, cpu)
      else backendCpu.set(pid, { first: fresh ? cpu : 0, last: cpu })
    }
  }
  const postgresCpu = () => [...backendCpu.values()].reduce((sum, b) => sum + b.last - b.first, 0)
  let waiting: { n: number; resolve: () => void } | null = null
  const receiver = createServer((req, res) => {
    const id = req.headers['svc-event-id'] as string
    req.resume()
    req.on('end', () => {
      if (arrivals.has(id)) duplicates++
      else arrivals.set(id, now())
      res.writeHead(200).end()
      if (waiting && arrivals.size >= waiting.n) {
        waiting.resolve()
        waiting = null
      }
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
  const until = (n: number, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      if (arrivals.size >= n) return resolve()
      const timer = setTimeout(
        () => reject(new Error(`only ${arrivals.size} of ${n} delivered`)),
        timeoutMs,
      )
      waiting = {
        n,
        resolve: () => {
          clearTimeout(timer)
          resolve()
        },
      }
    })

  try {
    const org = newId('org')
    await deps.db.insertInto('organizations').values({ id: org, name: 'bench' }).execute()
    await insertEndpoint(deps.db, {
      id: newId('whe'),
      organization_id: org,
      environment: 'sandbox',
      url: hookUrl,
      description: 'bench',
      enabled_events: ['*'],
      secret_sealed: sealSecret(config.masterKey, 'whsec_bench'),
      now: new Date(),
    })
    const scope = { organizationId: org, environment: 'sandbox' }
    const object = {
      id: 'card_bench',
      object: 'card',
      status: 'active',
      last4: '4242',
      metadata: { run: 'bench' },
    }

    // Phase 1: backlog, then two workers drain it.
    const t0 = now()
    for (let i = 0; i < N; i += 100) {
      await withTx(deps.db, async (trx) => {
        for (let j = i; j < Math.min(N, i + 100); j++)
          await emit(trx, scope, 'card.created', { ...object, n: j }, new Date())
      })
    }
    const emitMs = now() - t0
    const spawnAt = now()
    for (let w = 0; w < WORKERS; w++) {
      workers.push(
        spawn(process.execPath, ['bin/svc.js', 'worker'], {
          env,
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      )
    }
    await until(Math.min(N, 50), 300_000)
    // The worker pools are open once deliveries flow; their backends' CPU from here on is the database's cost.
    await sampleBackends(true)
    sampling = setInterval(() => {
      void sampleBackends(false)
    }, 200)
    const workers0 = workersCpu()
    const delivered0 = arrivals.size
    await until(N, 300_000)
    clearInterval(sampling)
    await sampleBackends(false)
    const cpuWorkers = workersCpu() - workers0
    const cpuPostgres = postgresCpu()
    const measured = N - delivered0
    const times = [...arrivals.values()].sort((a, b) => a - b)
    const drainMs = times[times.length - 1] - times[0]
    const throughput = (N / drainMs) * 1000

    // Phase 2: steady emission with the workers idle; commit → arrival.
    await sleep(1000)
    arrivals.clear()
    const committed = new Map<string, number>()
    const interval = 1000 / RATE
    const start = now()
    const inFlight = new Set<Promise<void>>()
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const wait = start + i * interval - now()
      if (wait > 1) await sleep(wait)
      // Emissions are not serialized behind each other: at high rates several transactions overlap, as in the API.
      while (inFlight.size >= 50) await Promise.race(inFlight)
      const p: Promise<void> = withTx(deps.db, (trx) =>
        emit(trx, scope, 'card.frozen', { ...object, n: i }, new Date()),
      )
        .then((id) => {
          committed.set(id, now())
        })
        .finally(() => inFlight.delete(p))
      inFlight.add(p)
    }
    await Promise.all(inFlight)
    const emitRate = (LATENCY_EVENTS / (now() - start)) * 1000
    await until(LATENCY_EVENTS, 60_000)
    await sleep(500)
    const leftover = await deps.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('type', '=', 'webhook.deliver')
      .executeTakeFirst()
    const latencies = [...committed.entries()]
      .map(([id, c]) => Math.max(0, arrivals.get(id)! - c))
      .sort((a, b) => a - b)

    const result = {
      database: 'PostgreSQL',
      workers: WORKERS,
      throughput: {
        events: N,
        emit_backlog_ms: Math.round(emitMs),
        first_delivery_after_spawn_ms: Math.round(times[0] - spawnAt),
        drain_ms: Math.round(drainMs),
        deliveries_per_second: Math.round(throughput),
        worker_cpu_ms_per_delivery: +((cpuWorkers * 1000) / measured).toFixed(3),
        postgres_cpu_ms_per_delivery: +((cpuPostgres * 1000) / measured).toFixed(3),
        duplicates,
        jobs_left: Number(leftover?.n ?? 0),
      },
      latency: {
        events: LATENCY_EVENTS,
        rate_per_second: RATE,
        achieved_emit_rate_per_second: Math.round(emitRate),
        p50_ms: +percentile(latencies, 50).toFixed(1),
        p90_ms: +percentile(latencies, 90).toFixed(1),
        p99_ms: +percentile(latencies, 99).toFixed(1),
        max_ms: +latencies[latencies.length - 1].toFixed(1),
      },
    }
    console.log(JSON.stringify(result, null, 2))
    const dir = new URL('./results/', import.meta.url)
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      new URL(`webhooks-${Date.now()}.json`, dir),
      JSON.stringify(
        {
          at: new Date().toISOString(),
          load: readFileSync('/proc/loadavg', 'utf8').trim(),
          ...result,
        },
        null,
        2,
      ),
    )
  } finally {
    if (sampling) clearInterval(sampling)
    for (const w of workers) w.kill('SIGTERM')
    await Promise.all(
      workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))),
    )
    receiver.closeAllConnections()
    receiver.close()
    await handle.close()
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
    await admin.end()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
