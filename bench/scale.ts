// `npm run bench -- scale`: the same measurements on a database holding a year of a card program and on an empty
// one, in the same run on the same machine, through HTTP against a real `svc serve`; the ratio large/empty of each
// figure is the result (target ≤ 1.5). See bench/README.md, "Scale".
//
// The large database (`svc_scale_<size>`, kept between runs: seeding takes minutes) holds one large organization
// and many small ones: 1 M cardholders, accounts and cards, 10.1 M ledger entries (one account with 100,000),
// 5 M authorizations, 10 M events each with a delivered webhook delivery and 5 M idempotency keys, spread over
// 400 days (bench/scale-seed-harness.ts). The empty database is created for the run and holds only what the
// measurements need: the same API-made objects, and cards enough for a page 1,000 pages deep.
//
//   npm run bench -- scale [--size 1] [--reseed] [--duration 15] [--warmup 3] [--write-runs 3] [--connections 16] [--rate 1000] [--cards 200]
//                          [--only large|empty] [--case TEXT] [--wal]
// `--size 0.01` seeds a hundredth of everything (a quick rehearsal); `--reseed` drops and seeds again.
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { signInOwner, type Browser } from './console-harness.js'
import {
  accessToken,
  adminQuery,
  benchDatabaseUrl,
  cannon,
  createTenant,
  startServer,
  type BenchClient,
  type BenchServer,
  type Figures,
} from './platform-harness.js'
import { paced } from './platform-paced-harness.js'
import { call, makeThroughApi, type Made } from './scale-api-harness.js'
import {
  databaseUrl,
  FULL_SEED,
  fillEmptyLists,
  largeDatabase,
  readSeedState,
  seedScale,
  writeSeedState,
  type LargeState,
  type SeedCounts,
} from './scale-seed-harness.js'
import { explainLists, type ListPlan } from './scale-explain-harness.js'
import { walByRelation, walLines } from './scale-wal-harness.js'

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1' },
    reseed: { type: 'boolean', default: false },
    duration: { type: 'string', default: '15' },
    // Seconds of the same load before each timed run, not counted: a freshly started process is cold (bench/README.md, "Scale").
    warmup: { type: 'string', default: '3' },
    // Runs of each write measurement (credits, authorizations); the one with the median p99 is reported.
    'write-runs': { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    rate: { type: 'string', default: '1000' },
    cards: { type: 'string', default: '200' },
    only: { type: 'string' },
    'console-runs': { type: 'string', default: '1000' },
    // Only the measurements whose name holds this text (e.g. `--case authorizations`), both databases still.
    case: { type: 'string' },
    // After each write measurement, the WAL it wrote by table and index (pg_walinspect; bench/scale-wal-harness.ts).
    wal: { type: 'boolean', default: false },
  },
})
const size = Number(values.size)
const duration = Number(values.duration)
const warmup = Number(values.warmup)
const writeRuns = Number(values['write-runs'])
const connections = Number(values.connections)
const rate = Number(values.rate)
const apiCards = Number(values.cards)
const consoleRuns = Number(values['console-runs'])
const admin = benchDatabaseUrl()
const DEEP_PAGES = 1000
const COLD_SECONDS = 5
const PAGE = 25
const counts: SeedCounts = {
  ...FULL_SEED,
  cardholders: Math.round(FULL_SEED.cardholders * size),
  hotAccountEntries: Math.max(1000, Math.round(FULL_SEED.hotAccountEntries * size)),
  authorizations: Math.round(FULL_SEED.authorizations * size),
  events: Math.round(FULL_SEED.events * size),
  idempotencyKeys: Math.round(FULL_SEED.idempotencyKeys * size),
  smallOrganizations: Math.max(10, Math.round(FULL_SEED.smallOrganizations * size)),
}
const SERVER_ENV = {
  HTTP_PROCESSES: String(cpus().length),
  DATABASE_CONNECTIONS: String(3 * cpus().length),
  SVC_DISABLE_WORKER: 'true',
}
const log = (line: string) => process.stdout.write(`${line}\n`)

/** Seeds the large database unless a seed of these counts is there. */
async function ensureLarge(name: string): Promise<LargeState> {
  if (!values.reseed) {
    const state = await readSeedState(databaseUrl(name), counts)
    if (state) {
      log(`-- large: reusing ${name} (seeded before: ${state.seedSeconds.toFixed(0)} s)`)
      return state
    }
  }
  await adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await adminQuery(admin, `CREATE DATABASE ${name}`)
  log(`-- large: ${name}: templates through the API, then the seed in SQL`)
  const server = await startServer(SERVER_ENV, { database: name })
  try {
    const client = await createTenant(server)
    const made = await makeThroughApi(server, client, await accessToken(client), apiCards)
    const seed = await seedScale(
      server.databaseUrl,
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
    const state: LargeState = {
      client,
      made,
      hotAccountId: seed.hotAccountId,
      seedLines: seed.lines,
      seedSeconds: seed.seconds,
    }
    await writeSeedState(databaseUrl(name), counts, state)
    log(`-- large: seeded in ${seed.seconds.toFixed(0)} s`)
    return state
  } finally {
    await server.stop()
  }
}

/** Ids of `count` rows of a table of the organization, spread over the whole table. */
async function sample(
  url: string,
  table: string,
  organizationId: string,
  count: number,
): Promise<string[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    // A block sample of the table (a few per cent, whatever its size), else every row in random order (a small table).
    let r = await c.query(
      `SELECT id FROM ${table} TABLESAMPLE SYSTEM (2) WHERE organization_id = $1 LIMIT ${count}`,
      [organizationId],
    )
    if (r.rows.length < count)
      r = await c.query(
        `SELECT id FROM ${table} WHERE organization_id = $1 ORDER BY random() LIMIT ${count}`,
        [organizationId],
      )
    return r.rows.map((x: { id: string }) => x.id)
  } finally {
    await c.end()
  }
}

interface Case {
  name: string
  figures: Figures
  walPerRequest: number
}

const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]
let sequence = 0

/** New authorizations of the API-made cards, as the network would present them, offered at a steady `rate`. */
function authorizations(
  server: BenchServer,
  headers: Record<string, string>,
  made: Made,
  seconds: number,
): Promise<Figures> {
  return paced(
    'authorizations',
    {
      url: `${server.baseUrl}/v1/simulate/authorizations`,
      method: 'POST',
      rate,
      connections: 32,
      duration: seconds,
      headers,
      body: () =>
        JSON.stringify({
          card_id: pick(made.cards),
          amount: 1 + Math.floor(Math.random() * 10_000),
          currency: 'USD',
          merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
        }),
    },
    server,
  )
}

/** One timed run after a checkpoint: its figures, the WAL it wrote per request (and by relation with `--wal`), logged. */
async function timedRun(
  label: string,
  name: string,
  server: BenchServer,
  go: () => Promise<Figures>,
): Promise<Case> {
  await server.settle()
  const walBefore = await server.walBytes()
  const figures = await go()
  const walAfter = await server.walBytes()
  const walPerRequest = Math.round((walAfter - walBefore) / Math.max(1, figures.requests))
  log(
    `  ${label} ${name}: ${figures.rps} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, ${walPerRequest} WAL bytes/request${figures.failures ? `, ${figures.failures} failed` : ''}`,
  )
  if (values.wal && walPerRequest > 100)
    log(
      walLines(
        `${label} ${name}`,
        await walByRelation(server.databaseUrl, walBefore, walAfter),
        figures.requests,
      ).join('\n'),
    )
  return { name, figures, walPerRequest }
}

/** Every measurement on one database; each timed run starts settled. */
async function measureAll(
  label: string,
  server: BenchServer,
  client: BenchClient,
  made: Made,
  targets: { accounts: string[]; cards: string[]; hotAccountId: string },
): Promise<Case[]> {
  const token = await accessToken(client)
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const out: Case[] = []
  // `go(seconds)` runs the measurement's load for that long; a warm-up of the same load comes first (not counted).
  // `times`: the run is repeated and the one with the median p99 kept (the writes load the 2-core machine near
  // its limit, where one stall moves a single run's p99 a lot).
  const run = async (name: string, go: (seconds: number) => Promise<Figures>, times = 1) => {
    if (values.case && !name.includes(values.case)) return
    const runs: Case[] = []
    for (let i = 0; i < times; i++) {
      if (warmup > 0) await go(warmup)
      runs.push(await timedRun(label, name, server, () => go(duration)))
    }
    out.push(runs.sort((a, b) => a.figures.p99 - b.figures.p99)[Math.floor((runs.length - 1) / 2)])
  }
  const get = (path: () => string, seconds = duration) => ({
    url: server.baseUrl,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET' as const,
        headers,
        setupRequest: (r: Record<string, unknown>) => ({ ...r, path: path() }),
      },
    ],
  })
  await cannon('warmup', { ...get(() => `/v1/cards/${pick(targets.cards)}`), duration: 2 })

  await run(
    'credits/s, spread over 1,000 accounts',
    (d) =>
      cannon(
        'credits',
        {
          url: server.baseUrl,
          connections,
          duration: d,
          requests: [
            {
              method: 'POST',
              headers,
              setupRequest: (r: Record<string, unknown>) => ({
                ...r,
                path: `/v1/accounts/${pick(targets.accounts)}/credit`,
                body: JSON.stringify({
                  amount: 1 + Math.floor(Math.random() * 10_000),
                  client_transaction_id: `scale-${process.pid}-${++sequence}`,
                }),
              }),
            },
          ],
        },
        server,
      ),
    writeRuns,
  )
  await run(
    `authorizations at a steady ${rate}/s`,
    (d) => authorizations(server, headers, made, d),
    writeRuns,
  )
  await run('GET /v1/cards/{id} (random card)', (d) =>
    cannon(
      'get',
      get(() => `/v1/cards/${pick(targets.cards)}`, d),
      server,
    ),
  )
  await run('GET /v1/cards (first page)', (d) =>
    cannon(
      'first',
      get(() => '/v1/cards', d),
      server,
    ),
  )
  const wanted = (name: string) => !values.case || name.includes(values.case)
  const deep = wanted('page 1000 deep')
    ? await walk(server, token, '/v1/cards', DEEP_PAGES, size < 1)
    : ''
  await run(`GET /v1/cards (page ${DEEP_PAGES} deep)`, (d) =>
    cannon(
      'deep',
      get(() => deep, d),
      server,
    ),
  )
  await run('GET /v1/accounts/{id}/entries (first page)', (d) =>
    cannon(
      'entries',
      get(() => `/v1/accounts/${targets.hotAccountId}/entries`, d),
      server,
    ),
  )
  const deepEntries = wanted('entries')
    ? await walk(server, token, `/v1/accounts/${targets.hotAccountId}/entries`, 39, true)
    : ''
  await run('GET /v1/accounts/{id}/entries (page 40 deep, or the last)', (d) =>
    cannon(
      'entries deep',
      get(() => deepEntries, d),
      server,
    ),
  )
  await run('GET /v1/events?type=account.credited', (d) =>
    cannon(
      'events',
      get(() => '/v1/events?type=account.credited', d),
      server,
    ),
  )
  await run('GET /v1/events?type=card.created', (d) =>
    cannon(
      'events rare',
      get(() => '/v1/events?type=card.created', d),
      server,
    ),
  )
  await run('GET /v1/authorizations?card_id=', (d) =>
    cannon(
      'auths by card',
      get(() => `/v1/authorizations?card_id=${pick(targets.cards)}`, d),
      server,
    ),
  )

  if (!wanted('console')) return out
  const { browser } = await signInOwner(server, client.organizationId)
  for (const page of [
    '/console/cardholders',
    '/console/accounts',
    '/console/cards',
    '/console/authorizations',
    '/console/developers/events',
    `/console/accounts/${targets.hotAccountId}`,
  ]) {
    await run(`console ${page.replace(targets.hotAccountId, '{id}')}`, () =>
      consolePage(browser, page),
    )
  }
  return out
}

/** The URL of the page `pages` pages after the first (following next_cursor), for a run that reads it again and again. */
async function walk(
  server: BenchServer,
  token: string,
  path: string,
  pages: number,
  orLast = false,
): Promise<string> {
  let url = path
  for (let i = 0; i < pages; i++) {
    const page = await call(server, token, 'GET', url)
    if (!page.next_cursor && orLast) break
    if (!page.next_cursor) throw new Error(`${path}: only ${i + 1} pages`)
    url = `${path}${path.includes('?') ? '&' : '?'}starting_after=${encodeURIComponent(page.next_cursor)}`
  }
  return url
}

/** A console page requested one at a time (a person clicking), `consoleRuns` times after 3 warm-ups. */
async function consolePage(browser: Browser, path: string): Promise<Figures> {
  for (let i = 0; i < 3; i++) await browser.get(path)
  const ms: number[] = []
  let failures = 0
  const started = Date.now()
  for (let i = 0; i < consoleRuns; i++) {
    const r = await browser.get(path)
    if (r.status !== 200) failures++
    ms.push(r.ms)
  }
  ms.sort((a, b) => a - b)
  const at = (p: number) =>
    Math.round(ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)] * 10) / 10
  return {
    name: path,
    requests: ms.length,
    rps: Math.round(ms.length / ((Date.now() - started) / 1000)),
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: at(1),
    failures,
    cpuMs: null,
  }
}

/**
 * Authorizations in the first seconds of a process that has served nothing yet (a deploy, a restart): a new
 * `svc serve` on the same database, the same steady load with no warm-up, so both databases start equally cold.
 */
async function coldStart(
  label: string,
  database: string,
  client: BenchClient,
  made: Made,
  out: Case[],
): Promise<void> {
  const name = `authorizations at a steady ${rate}/s, the first ${COLD_SECONDS} s of a new process`
  if (values.case && !name.includes(values.case)) return
  const server = await startServer(SERVER_ENV, { database })
  try {
    client.tokenUrl = `${server.baseUrl}/oauth/token`
    const headers = {
      authorization: `Bearer ${await accessToken(client)}`,
      'content-type': 'application/json',
    }
    out.push(
      await timedRun(label, name, server, () =>
        authorizations(server, headers, made, COLD_SECONDS),
      ),
    )
  } finally {
    await server.stop()
  }
}

async function databaseSize(name: string): Promise<{ total: string; tables: string[] }> {
  const c = new pg.Client({ connectionString: databaseUrl(name) })
  await c.connect()
  try {
    const total = (
      await c.query('SELECT pg_size_pretty(pg_database_size(current_database())) AS s')
    ).rows[0].s as string
    const tables = (
      await c.query(`SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) AS s, reltuples::bigint AS n FROM pg_class
      WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY pg_total_relation_size(oid) DESC LIMIT 10`)
    ).rows
    return {
      total,
      tables: tables.map(
        (t: any) => `${t.relname} ${t.s} (~${Number(t.n).toLocaleString('en-US')} rows)`,
      ),
    }
  } finally {
    await c.end()
  }
}

// ---------------------------------------------------------------------------------------------------------------

const loadBefore = loadavg()[0]
const largeName = largeDatabase(size).name
const results: Record<string, Case[]> = {}
let plans: ListPlan[] = []
let size_: Awaited<ReturnType<typeof databaseSize>> | null = null
let seedLines: string[] = []

if (values.only !== 'large') {
  log('-- empty: a fresh database, the same objects through the API')
  // Named here rather than by startServer, so that it outlives the first server for the cold-start case.
  const emptyName = `svc_scale_empty_${process.pid}`
  await adminQuery(admin, `DROP DATABASE IF EXISTS ${emptyName} WITH (FORCE)`)
  await adminQuery(admin, `CREATE DATABASE ${emptyName}`)
  try {
    const server = await startServer(SERVER_ENV, { database: emptyName })
    let client: BenchClient
    let made: Made
    try {
      client = await createTenant(server)
      made = await makeThroughApi(server, client, await accessToken(client), apiCards)
      await fillEmptyLists(server.databaseUrl, made, {
        cards: (DEEP_PAGES + 1) * PAGE,
        cardholders: 1000,
      })
      results.empty = await measureAll('empty', server, client, made, {
        accounts: made.accounts,
        cards: made.cards,
        hotAccountId: made.accountId,
      })
    } finally {
      await server.stop()
    }
    await coldStart('empty', emptyName, client, made, results.empty)
  } finally {
    await adminQuery(admin, `DROP DATABASE IF EXISTS ${emptyName} WITH (FORCE)`)
  }
}
if (values.only !== 'empty') {
  const state = await ensureLarge(largeName)
  seedLines = state.seedLines
  size_ = await databaseSize(largeName)
  const server = await startServer(SERVER_ENV, { database: largeName })
  state.client.tokenUrl = `${server.baseUrl}/oauth/token`
  try {
    const accounts = await sample(server.databaseUrl, 'accounts', state.client.organizationId, 1000)
    const cards = await sample(server.databaseUrl, 'cards', state.client.organizationId, 1000)
    log(`-- large: measuring (${size_.total})`)
    results.large = await measureAll('large', server, state.client, state.made, {
      accounts,
      cards,
      hotAccountId: state.hotAccountId,
    })
    if (!values.case)
      plans = await explainLists(server, largeName, state.client, {
        cardId: cards[0],
        hotAccountId: state.hotAccountId,
      })
  } finally {
    await server.stop()
  }
  await coldStart('large', largeName, state.client, state.made, results.large)
}

const lines = [
  `svc scale benchmark — ${new Date().toISOString()}`,
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, PostgreSQL, ${SERVER_ENV.HTTP_PROCESSES} HTTP processes, ${duration} s per run, ${connections} connections, load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  '',
  '| measurement | empty: req/s | p99 ms | large: req/s | p99 ms | ratio (p99 large/empty) | ratio (req/s empty/large) |',
  '|---|---:|---:|---:|---:|---:|---:|',
]
const worst: number[] = []
for (const [i, c] of (results.large ?? results.empty ?? []).entries()) {
  const e = results.empty?.[i]?.figures
  const l = results.large?.[i]?.figures
  const p99Ratio = e && l ? l.p99 / Math.max(e.p99, 0.1) : NaN
  const rpsRatio = e && l ? e.rps / Math.max(l.rps, 1) : NaN
  if (e && l) worst.push(Math.max(p99Ratio, rpsRatio))
  lines.push(
    `| ${c.name} | ${e?.rps ?? '–'} | ${e?.p99 ?? '–'} | ${l?.rps ?? '–'} | ${l?.p99 ?? '–'} | ${Number.isNaN(p99Ratio) ? '–' : p99Ratio.toFixed(2)} | ${Number.isNaN(rpsRatio) ? '–' : rpsRatio.toFixed(2)} |`,
  )
}
if (size_)
  lines.push(
    '',
    `large database on disk: ${size_.total}; largest tables: ${size_.tables.join('; ')}`,
  )
if (seedLines.length) lines.push('', 'seed:', ...seedLines.map((l) => `  ${l}`))
if (plans.length) {
  lines.push('', 'plans of the list queries on the large database (auto_explain, ANALYZE):')
  for (const p of plans) lines.push(`  ${p.request}: ${p.summary}`)
}
if (worst.length)
  lines.push(
    '',
    `worst ratio ${Math.max(...worst).toFixed(2)} (target ≤ 1.5): ${Math.max(...worst) <= 1.5 ? 'met' : 'NOT met'}`,
  )
log(lines.join('\n'))

const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(dir, { recursive: true })
const stamp = Date.now()
writeFileSync(
  join(dir, `scale-${stamp}.json`),
  JSON.stringify({ counts, results, size: size_, seedLines, plans }, null, 2),
)
if (plans.length)
  writeFileSync(
    join(dir, `scale-plans-${stamp}.txt`),
    plans.map((p) => `## ${p.request}\n${p.plan}\n`).join('\n'),
  )
