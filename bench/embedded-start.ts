// `npm run bench -- embedded-start`: how long the embedded start takes, as the README's two commands meet it.
//
//   existing data  `svc serve` (what `npm start` runs) on a DATA_DIR that holds about 130,000 rows: time from spawn
//                  to the banner, to the answer of the first request (the README's first call: POST /oauth/token
//                  sent as the banner appears) and to a list and a card read with that token
//   first run      the same on an empty DATA_DIR: migrations, the demo seed, the banner, the first answer
//   svc token      `npx svc token` in the checkout's folder, against the running server, spawn to exit
//
// With `--baseline DIR` (another checkout with its node_modules, e.g. of an older commit) every round starts both,
// interleaved, the order alternating, and the report sets their medians side by side; figures from other runs or
// days do not compare, the machine's other work moves them. `npx` answers fastest in an ordinary clone (with
// node_modules/.package-lock.json current), so run both from such folders.
//
// The existing DATA_DIR is prepared once per run: `svc serve` makes the templates through the API (an
// organization, a webhook endpoint, cards, authorizations, events), the server stops, and the scale seed
// (bench/scale-seed-harness.ts) writes the rest straight into the embedded database: 10,000 cardholders, accounts
// and cards, 31,000 ledger entries, 20,000 authorizations, 20,000 events and their deliveries, 10,000 idempotency
// keys. An untimed start of each checkout then seeds the demo sandbox, whose client the timed starts use.
//
//   npm run bench -- embedded-start [--runs 3] [--baseline DIR]
import { spawn } from 'node:child_process'
import { createPrivateKey, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, setPriority, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { SandboxClientFile } from '../src/seed/client-file.js'
import {
  accessToken,
  createTenant,
  startServer,
  tokenRequest,
  type BenchClient,
} from './platform-harness.js'
import { makeThroughApi } from './scale-api-harness.js'
import { FULL_SEED, pgliteSql, seedScale, type SeedCounts } from './scale-seed-harness.js'

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, baseline: { type: 'string' } },
})
const runs = Number(values.runs)
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const checkouts = [
  ...(values.baseline ? [{ name: 'baseline', dir: resolve(values.baseline) }] : []),
  { name: 'this', dir: ROOT },
]
/** The issue's targets for this checkout: first answer on existing data, first run, `npx svc token`. */
const TARGETS = { existingAnswerMs: 1500, firstRunAnswerMs: 4000, tokenMs: 500 }
const counts: SeedCounts = {
  ...FULL_SEED,
  cardholders: 10_000,
  entriesPerAccount: 3,
  hotAccountEntries: 1_000,
  authorizations: 20_000,
  events: 20_000,
  idempotencyKeys: 10_000,
  smallOrganizations: 10,
}
const log = (line: string) => process.stdout.write(`${line}\n`)
// BENCH_PRIORITY (a nice value such as -10, root only): this process and the servers it starts go first.
if (process.env.BENCH_PRIORITY) setPriority(Number(process.env.BENCH_PRIORITY))

const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-start-'))
const masterKey = randomBytes(32).toString('base64')
log(`-- preparing ${dataDir}: templates through the API`)
const server = await startServer({
  DATABASE_URL: '',
  DATA_DIR: dataDir,
  SVC_MASTER_KEY: masterKey,
  SVC_DISABLE_WORKER: 'true',
})
let client
let made
try {
  client = await createTenant(server)
  made = await makeThroughApi(server, client, await accessToken(client), 20)
} finally {
  await server.stop()
}
log('-- seeding the embedded database')
const { PGlite } = await import('@electric-sql/pglite')
const db = new PGlite(join(dataDir, 'pgdata'))
await db.waitReady
const seed = await seedScale(
  pgliteSql(db),
  {
    organizationId: client.organizationId,
    programId: client.programIds[0],
    endpointId: made.endpointId,
    cardholderId: made.cardholderId,
    accountId: made.accountId,
    cardId: made.cardId,
  },
  counts,
  log,
)
const objects = seed.lines.reduce(
  (sum, line) => sum + Number(/: ([\d,]+) rows/.exec(line)?.[1].replaceAll(',', '') ?? 0),
  0,
)
log(`-- ${objects.toLocaleString('en-US')} rows written in ${seed.seconds.toFixed(1)} s`)

interface Start {
  bannerMs: number
  /** Spawn to the answer of POST /oauth/token, sent when the banner appeared. */
  answerMs: number
  /** CPU seconds the server had used when that answer came (user + system, all its threads). */
  cpuMs: number
  listMs: number
  getMs: number
}
interface Round {
  checkout: string
  existing: Start
  firstRun: Start
  tokenMs: number
}

function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The demo sandbox client the start wrote, as a bench client for its server. */
function demoClient(dir: string, port: number): BenchClient {
  const file = JSON.parse(
    readFileSync(join(dir, 'sandbox-client.json'), 'utf8'),
  ) as SandboxClientFile
  const key = createPrivateKey({ key: file.private_jwk as never, format: 'jwk' })
  return {
    clientId: file.client_id,
    tokenUrl: `http://127.0.0.1:${port}/oauth/token`,
    key,
    kid: file.kid,
    organizationId: file.organization_id,
    programIds: file.programs.map((p) => p.id),
  }
}

interface Running {
  start: Start
  stop: () => Promise<void>
}

/**
 * `svc serve` of one checkout on `dir`, timed to its banner and its first answer; then, with `tenant` (the
 * organization that owns the seeded rows), a list and a card read. Running until `stop()`.
 */
async function serveOnce(
  checkout: string,
  dir: string,
  port: number,
  tenant?: BenchClient,
): Promise<Running> {
  const { SVC_DISABLE_WORKER: _worker, ...inherited } = process.env
  const started = performance.now()
  const child = spawn(process.execPath, [join(checkout, 'bin/svc.js'), 'serve'], {
    cwd: checkout,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...inherited,
      DATABASE_URL: '',
      DATA_DIR: dir,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${port}`,
      SVC_MASTER_KEY: masterKey,
      LOG_LEVEL: 'warn',
    },
  })
  const exited = new Promise((r) => child.once('exit', r))
  const stop = async () => {
    child.kill('SIGTERM')
    await exited
  }
  let output = ''
  try {
    const bannerMs = await new Promise<number>((resolveBanner, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('svc is listening on')) resolveBanner(performance.now() - started)
      }
      child.stdout.on('data', onData)
      child.stderr.on('data', onData)
      child.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${output}`)))
      setTimeout(() => reject(new Error(`no banner after 90 s:\n${output}`)), 90_000).unref()
    })
    const demo = demoClient(dir, port)
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    const answer = await fetch(demo.tokenUrl, {
      method: 'POST',
      headers: form,
      body: tokenRequest(demo),
    })
    await answer.text()
    const answerMs = performance.now() - started
    const cpuMs = cpuMsOf(child.pid!)
    if (!answer.ok) throw new Error(`token request answered ${answer.status}`)
    if (!tenant) return { start: { bannerMs, answerMs, cpuMs, listMs: NaN, getMs: NaN }, stop }
    const headers = {
      authorization: `Bearer ${await accessToken({ ...tenant, tokenUrl: demo.tokenUrl })}`,
    }
    const t0 = performance.now()
    const list = await fetch(`http://127.0.0.1:${port}/v1/cards?limit=100`, { headers })
    const page = (await list.json()) as { data: { id: string }[] }
    const listMs = performance.now() - t0
    const t1 = performance.now()
    const one = await fetch(`http://127.0.0.1:${port}/v1/cards/${page.data.at(-1)!.id}`, {
      headers,
    })
    await one.text()
    const getMs = performance.now() - t1
    if (!list.ok || !one.ok) throw new Error(`reads answered ${list.status}/${one.status}`)
    return { start: { bannerMs, answerMs, cpuMs, listMs, getMs }, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/** `npx svc token` in the checkout, as the banner's first call runs it; spawn to exit. */
async function npxToken(checkout: string, dir: string): Promise<number> {
  const started = performance.now()
  const args = ['svc', 'token', '--client-file', join(dir, 'sandbox-client.json')]
  const child = spawn('npx', args, { cwd: checkout, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (c) => {
    out += c
  })
  child.stderr.on('data', (c) => {
    out += c
  })
  const code = await new Promise((r) => child.once('exit', r))
  const ms = performance.now() - started
  if (code !== 0 || !/^at_\w+/.test(out.trim()))
    throw new Error(`npx svc token in ${checkout}: ${code}, ${out}`)
  return ms
}

const port = () => 20_000 + Math.floor(Math.random() * 20_000)
// Untimed: the first seeds the demo sandbox; each warms what its checkout caches (tsx's transforms, the page cache).
log('-- an untimed start of each checkout')
for (const checkout of checkouts) await (await serveOnce(checkout.dir, dataDir, port())).stop()

const rounds: Round[] = []
for (let i = 0; i < runs; i++) {
  for (const checkout of i % 2 === 0 ? checkouts : [...checkouts].reverse()) {
    const running = await serveOnce(checkout.dir, dataDir, port(), client)
    let tokenMs
    try {
      tokenMs = await npxToken(checkout.dir, dataDir)
    } finally {
      await running.stop()
    }
    const empty = mkdtempSync(join(tmpdir(), 'svc-first-run-'))
    const first = await serveOnce(checkout.dir, empty, port())
    await first.stop()
    rmSync(empty, { recursive: true, force: true })
    const round = {
      checkout: checkout.name,
      existing: running.start,
      firstRun: first.start,
      tokenMs,
    }
    rounds.push(round)
    const e = round.existing
    const f = first.start
    log(
      `  round ${i + 1} ${checkout.name}: existing data banner ${ms(e.bannerMs)}, first answer ${ms(e.answerMs)} ` +
        `(cpu ${ms(e.cpuMs)}), list ${ms(e.listMs)}, card ${ms(e.getMs)}; first run banner ${ms(f.bannerMs)}, ` +
        `first answer ${ms(f.answerMs)} (cpu ${ms(f.cpuMs)}); npx svc token ${ms(tokenMs)}`,
    )
  }
}

function ms(value: number): string {
  return `${Math.round(value)} ms`
}

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const figures: [string, (r: Round) => number][] = [
  ['existing data: banner', (r) => r.existing.bannerMs],
  ['existing data: first answer', (r) => r.existing.answerMs],
  ['existing data: server CPU to first answer', (r) => r.existing.cpuMs],
  [
    'existing data: GET /v1/cards?limit=100, then a card',
    (r) => r.existing.listMs + r.existing.getMs,
  ],
  ['first run: banner', (r) => r.firstRun.bannerMs],
  ['first run: first answer', (r) => r.firstRun.answerMs],
  ['first run: server CPU to first answer', (r) => r.firstRun.cpuMs],
  ['npx svc token', (r) => r.tokenMs],
]
const medianOf = (name: string, pick: (r: Round) => number) => {
  return median(rounds.filter((r) => r.checkout === name).map(pick))
}
const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`
const columns = checkouts.map((c) => (c.name === 'this' ? 'this checkout' : `baseline (${c.dir})`))
const header = `| median of ${runs} | ${columns.join(' | ')} |${values.baseline ? ' ratio |' : ''}`
const lines = figures.map(([label, pick]) => {
  const [a, b] = checkouts.map((c) => medianOf(c.name, pick))
  const cells = [a, b].filter((v) => v !== undefined).map(seconds)
  return `| ${label} | ${cells.join(' | ')} |${values.baseline ? ` ${(b / a).toFixed(2)} |` : ''}`
})
const mine = (pick: (r: Round) => number) => medianOf('this', pick)
const verdict = (label: string, value: number, target: number) => {
  if (value >= target) process.exitCode = 1
  return `${label} ${seconds(value)} (target < ${seconds(target)}): ${value < target ? 'met' : 'NOT met'}`
}
log(
  [
    '',
    `svc embedded start — ${new Date().toISOString()}`,
    `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg()[0].toFixed(1)}; ${objects.toLocaleString('en-US')} rows in ${dataDir}`,
    '',
    header,
    `|---|${checkouts.map(() => '---:|').join('')}${values.baseline ? '---:|' : ''}`,
    ...lines,
    '',
    verdict(
      'existing data, first answer',
      mine((r) => r.existing.answerMs),
      TARGETS.existingAnswerMs,
    ),
    verdict(
      'first run, first answer',
      mine((r) => r.firstRun.answerMs),
      TARGETS.firstRunAnswerMs,
    ),
    verdict(
      'npx svc token',
      mine((r) => r.tokenMs),
      TARGETS.tokenMs,
    ),
  ].join('\n'),
)
const dir = join(ROOT, 'bench', 'results')
mkdirSync(dir, { recursive: true })
writeFileSync(
  join(dir, `embedded-start-${Date.now()}.json`),
  JSON.stringify({ counts, objects, checkouts, rounds }, null, 2),
)
