// `npm run bench -- retention`: how fast the retention purges remove a year's backlog, and what they cost the
// requests running beside them, on the scale benchmark's large database (seed it first with
// `npm run bench -- scale`; `--size` must match). Credits run against a real `svc serve` on that database for the
// whole benchmark: first alone (the baseline), then while this process runs each purge of the service (the same
// `PURGES` the schedules run, src/modules/retention.ts) for at most `--seconds`, through the service's own code on
// its own connections. The figures: rows removed per second by each purge, the slowest statement, and the
// credits' p99 alone and during the purges.
//
// The purges delete for real: events older than 30 days and idempotency keys older than 24 hours leave the large
// database, oldest first (the lists the scale benchmark reads are the newest rows, so its figures hardly move;
// `npm run bench -- scale --reseed` seeds it again).
//
//   npm run bench -- retention [--size 1] [--seconds 30] [--connections 16] [--purge events]
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { PURGES } from '../src/modules/retention.js'
import { openRuntime } from '../src/runtime.js'
import { accessToken, cannon, startServer, type Figures } from './platform-harness.js'
import { largeDatabase, readSeedState } from './scale-seed-harness.js'

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '16' },
    // Only the purge of this name (e.g. `--purge events`): each purge can then be given the whole time.
    purge: { type: 'string' },
  },
})
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const log = (line: string) => process.stdout.write(`${line}\n`)

const { name, url } = largeDatabase(Number(values.size))
const state = await readSeedState(url)
if (!state)
  throw new Error(
    `${name} is not seeded: run \`npm run bench -- scale --size ${values.size}\` first`,
  )

class Deadline extends Error {}

interface PurgeFigures {
  purge: string
  removed: number
  seconds: number
  rowsPerSecond: number
  statements: number
  slowestMs: number
  stoppedAtDeadline: boolean
}

const server = await startServer(
  {
    HTTP_PROCESSES: String(cpus().length),
    DATABASE_CONNECTIONS: String(3 * cpus().length),
    SVC_DISABLE_WORKER: 'true',
  },
  { database: name },
)
state.client.tokenUrl = `${server.baseUrl}/oauth/token`
const rows: Figures[] = []
const purges: PurgeFigures[] = []
try {
  const token = await accessToken(state.client)
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  let n = 0
  const credits = (duration: number) => ({
    url: server.baseUrl,
    connections,
    duration,
    requests: [
      {
        method: 'POST' as const,
        headers,
        setupRequest: (r: Record<string, unknown>) => ({
          ...r,
          path: `/v1/accounts/${state.made.accounts[n % state.made.accounts.length]}/credit`,
          body: JSON.stringify({
            amount: 1 + (n % 1000),
            client_transaction_id: `ret-${randomBytes(4).toString('hex')}-${++n}`,
          }),
        }),
      },
    ],
  })
  await server.settle()
  rows.push(await cannon('credits alone', credits(10), server))
  log(`  credits alone: ${rows[0].rps}/s, p99 ${rows[0].p99} ms`)

  const config = loadConfig({
    DATABASE_URL: url,
    BASE_URL: server.baseUrl,
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_DISABLE_WORKER: 'true',
    LOG_LEVEL: 'warn',
    DATABASE_CONNECTIONS: '2',
    SVC_OPERATOR_TOKEN: randomBytes(16).toString('hex'),
  })
  const { deps, handle } = await openRuntime(config)
  try {
    // The credits run exactly as long as the purges may: each purge in turn, until it is done or the time is up.
    const during = cannon('credits during the purges', credits(seconds), server)
    const end = performance.now() + seconds * 1000
    for (const purge of PURGES.filter((p) => !values.purge || p.name === values.purge)) {
      const started = performance.now()
      let last = started
      let statements = 0
      let slowest = 0
      let removed = 0
      let stopped = false
      try {
        await purge.run(deps, {
          onBatch: (k) => {
            const now = performance.now()
            statements++
            removed += k
            slowest = Math.max(slowest, now - last)
            last = now
            if (now > end) throw new Deadline()
          },
        })
      } catch (err) {
        if (!(err instanceof Deadline)) throw err
        stopped = true
      }
      const elapsed = (performance.now() - started) / 1000
      purges.push({
        purge: purge.name,
        removed,
        seconds: elapsed,
        rowsPerSecond: Math.round(removed / Math.max(elapsed, 0.001)),
        statements,
        slowestMs: Math.round(slowest),
        stoppedAtDeadline: stopped,
      })
      log(
        `  ${purge.name}: ${removed.toLocaleString('en-US')} rows in ${elapsed.toFixed(1)} s (${statements} statements, slowest ${Math.round(slowest)} ms including the pause)${stopped ? ', stopped: time up' : ''}`,
      )
      if (stopped) break
    }
    rows.push(await during)
    log(`  credits during the purges: ${rows[1].rps}/s, p99 ${rows[1].p99} ms`)
  } finally {
    await handle.close()
  }
} finally {
  await server.stop()
}

const report = [
  `svc retention benchmark — ${new Date().toISOString()}`,
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, PostgreSQL database ${name}, purges for at most ${seconds} s beside credits over ${connections} connections, load average ${loadavg()[0].toFixed(1)}`,
  '',
  '| purge | rows removed | seconds | rows/s | statements | slowest statement + pause ms |',
  '|---|---:|---:|---:|---:|---:|',
  ...purges.map(
    (p) =>
      `| ${p.purge}${p.stoppedAtDeadline ? ' (time up)' : ''} | ${p.removed.toLocaleString('en-US')} | ${p.seconds.toFixed(1)} | ${p.rowsPerSecond.toLocaleString('en-US')} | ${p.statements} | ${p.slowestMs} |`,
  ),
  '',
  '| credits | req/s | p50 ms | p99 ms | max ms |',
  '|---|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.max} |`),
  rows.length === 2
    ? `p99 during the purges / alone: ${(rows[1].p99 / Math.max(rows[0].p99, 0.1)).toFixed(2)}`
    : '',
].join('\n')
log(report)
const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(dir, { recursive: true })
writeFileSync(
  join(dir, `retention-${Date.now()}.json`),
  JSON.stringify({ seconds, connections, purges, rows }, null, 2),
)
