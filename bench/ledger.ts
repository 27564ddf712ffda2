// Ledger benchmark: credits through the HTTP API (POST /v1/accounts/{id}/credit, each with its own
// client_transaction_id, then each with an Idempotency-Key) against a real `svc serve` on PostgreSQL, spread over many accounts and all on
// one hot account, beside `pgbench -N` on the same PostgreSQL in the same run.
// Usage: npm run bench -- ledger [--duration 15] [--connections 32] [--accounts 1000] [--warmup 3] [--processes 2] [--db-connections 6]
//   [--only spread|hot|keyed]: that run alone, without pgbench (to profile one kind of credit)
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import {
  accessToken,
  benchDatabaseUrl,
  cannon,
  createTenant,
  pgToolArgs,
  startServer,
  table,
  type BenchServer,
  type Figures,
} from './platform-harness.js'

const TARGET = { spreadRps: 1200, pgbenchShare: 0.4, hotSlowdown: 5 }

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    accounts: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '3' },
    // One HTTP process per core, as a deployment on this machine would run (HTTP_PROCESSES).
    processes: { type: 'string', default: String(cpus().length) },
    // The server's PostgreSQL connections in all (DATABASE_CONNECTIONS), sized to the database's cores as a
    // deployment beside a 2-core database would be: more backends than that only queue inside PostgreSQL.
    'db-connections': { type: 'string', default: String(3 * cpus().length) },
    only: { type: 'string' },
  },
  allowPositionals: true,
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const accountCount = Number(values.accounts)
const warmup = Number(values.warmup)
const admin = benchDatabaseUrl()
const only = values.only
if (only !== undefined && !['spread', 'hot', 'keyed'].includes(only)) {
  throw new Error('--only takes spread, hot or keyed')
}

async function call(
  server: BenchServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<any> {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json()
  if (res.status >= 300)
    throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** An approved cardholder with `count` USD accounts on the sim_full program. */
async function openAccounts(
  server: BenchServer,
  token: string,
  programId: string,
  count: number,
): Promise<string[]> {
  const holder = await call(server, token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Bench',
    last_name: 'Holder',
    email: 'bench@example.com',
  })
  await call(server, token, 'POST', `/v1/cardholders/${holder.id}/kyc`, {
    status: 'approved',
    provider: 'bench',
    verified_at: new Date(Date.now() - 60_000).toISOString(),
  })
  const ids: string[] = []
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, () =>
        call(server, token, 'POST', '/v1/accounts', {
          program_id: programId,
          cardholder_id: holder.id,
          currency: 'USD',
        }),
      ),
    )
    ids.push(...batch.map((a: { id: string }) => a.id))
  }
  return ids
}

let sequence = 0
const runTag = randomBytes(4).toString('hex')

/**
 * Credits with random amounts, each to an account picked by `pick`: with a fresh client_transaction_id, or
 * (`withKey`) with a fresh Idempotency-Key instead, whose answer the credit's statement stores.
 */
function credits(server: BenchServer, token: string, pick: () => string, withKey = false) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  return {
    url: server.baseUrl,
    connections,
    requests: [
      {
        method: 'POST',
        headers,
        setupRequest: (req: Record<string, unknown>) => {
          const id = `bench-${runTag}-${++sequence}`
          const amount = 1 + Math.floor(Math.random() * 10_000)
          return {
            ...req,
            path: `/v1/accounts/${pick()}/credit`,
            ...(withKey ? { headers: { ...headers, 'idempotency-key': id } } : {}),
            body: JSON.stringify(withKey ? { amount } : { amount, client_transaction_id: id }),
          }
        },
      },
    ],
  }
}

/** ANALYZE on the service's database, as autovacuum does on a running system. */
async function analyze(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('ANALYZE')
  } finally {
    await client.end()
  }
}

/** `pgbench -N` (TPC-B without the branch and teller updates) on its own database of the same server. */
async function pgbench(settle: () => Promise<void>): Promise<{ tps: number; line: string }> {
  const db = `svc_pgbench_${randomBytes(4).toString('hex')}`
  const { args: conn, env } = pgToolArgs(admin)
  execFileSync('createdb', [...conn, db], { env })
  try {
    execFileSync('pgbench', [...conn, '-i', '-q', '-s', '10', db], { env, stdio: 'ignore' })
    // The same start as the credit runs get: what the initialization wrote is on disk before the clock starts.
    await settle()
    const out = execFileSync(
      'pgbench',
      [...conn, '-N', '-c', String(connections), '-j', '2', '-T', String(duration), db],
      { env, encoding: 'utf8' },
    )
    const line =
      out.split('\n').find((l) => l.startsWith('tps =') && !l.includes('including')) ??
      out.split('\n').find((l) => l.startsWith('tps =')) ??
      ''
    return { tps: Math.round(Number(/tps = ([\d.]+)/.exec(line)?.[1] ?? 0)), line: line.trim() }
  } finally {
    execFileSync('dropdb', [...conn, '--force', db], { env })
  }
}

/** Reads ledgers back through the API: each sampled account's balance must equal the sum of its entries. */
async function verify(server: BenchServer, token: string, sample: string[]): Promise<string> {
  // autocannon stops with requests still queued at the server: let them finish first.
  await new Promise((r) => setTimeout(r, 3000))
  let entries = 0
  for (const id of sample) {
    const account = await call(server, token, 'GET', `/v1/accounts/${id}`)
    let sum = 0
    let cursor: string | null = null
    do {
      const page: { data: { amount: number }[]; next_cursor: string | null } = await call(
        server,
        token,
        'GET',
        `/v1/accounts/${id}/entries?limit=100${cursor ? `&starting_after=${cursor}` : ''}`,
      )
      for (const e of page.data) {
        sum += e.amount
        entries++
      }
      cursor = page.next_cursor
    } while (cursor)
    if (sum !== account.ledger_balance)
      return `LEDGER MISMATCH on ${id}: balance ${account.ledger_balance}, entries sum ${sum}`
  }
  return `ledger consistent: ${sample.length} accounts read back (${entries} entries), each balance equals the sum of its entries`
}

const loadBefore = loadavg()[0]
const server = await startServer({
  HTTP_PROCESSES: values.processes!,
  DATABASE_CONNECTIONS: values['db-connections']!,
})
const rows: Figures[] = []
let pg0 = { tps: 0, line: '' }
let check = ''
const walPerCredit: string[] = []
try {
  const client = await createTenant(server)
  const token = await accessToken(client)
  const ids = await openAccounts(server, token, client.programIds[0], accountCount)
  const hot = ids[0]
  const spreadPick = () => ids[Math.floor(Math.random() * ids.length)]

  // Warm-up with and without a key, then ANALYZE: the timed runs see the plans a running service has once
  // autovacuum has analyzed its tables, not those made on the empty tables of a fresh database (see README).
  await cannon('warmup', { ...credits(server, token, spreadPick), duration: warmup })
  await cannon('warmup with Idempotency-Key', {
    ...credits(server, token, spreadPick, true),
    duration: warmup,
  })
  await analyze(server.databaseUrl)
  if (only === undefined) pg0 = await pgbench(() => server.settle())
  const runs = [
    {
      kind: 'spread',
      name: `credits, ${ids.length} accounts, ${connections} conn`,
      pick: spreadPick,
      keyed: false,
    },
    {
      kind: 'hot',
      name: `credits, 1 hot account, ${connections} conn`,
      pick: () => hot,
      keyed: false,
    },
    {
      kind: 'keyed',
      name: `credits with Idempotency-Key, ${ids.length} accounts, ${connections} conn`,
      pick: spreadPick,
      keyed: true,
    },
  ]
  for (const run of runs.filter((r) => only === undefined || r.kind === only)) {
    await server.settle()
    // WAL of the whole PostgreSQL cluster over the run (nothing else writes to it meanwhile but other machines' users).
    const walBefore = await server.walBytes()
    const row = await cannon(
      run.name,
      { ...credits(server, token, run.pick, run.keyed), duration },
      server,
    )
    walPerCredit.push(
      `${run.kind} ${Math.round(((await server.walBytes()) - walBefore) / Math.max(1, row.requests))} B`,
    )
    rows.push(row)
  }
  check = await verify(server, token, [hot, ...ids.slice(1, 21)])
} finally {
  await server.stop()
}

const [spread, hotRow, keyed] = rows
const share = pg0.tps > 0 ? spread.rps / pg0.tps : 0
const meets =
  spread.rps >= TARGET.spreadRps &&
  share >= TARGET.pgbenchShare &&
  hotRow.rps * TARGET.hotSlowdown >= spread.rps
const report = [
  `svc ledger benchmark — ${new Date().toISOString()}`,
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, PostgreSQL, ${values.processes} HTTP processes sharing ${values['db-connections']} database connections, ${duration} s per run, load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  '',
  table(rows),
  `WAL per credit: ${walPerCredit.join(', ')}`,
  '',
  ...(only !== undefined
    ? [check]
    : [
        `pgbench -N -c ${connections} -j 2 -T ${duration} (scale 10): ${pg0.tps} tps (${pg0.line})`,
        `spread credits/s = ${Math.round(share * 100)} % of pgbench -N; hot account ${hotRow.rps ? (spread.rps / hotRow.rps).toFixed(2) : '∞'}× slower than spread; with Idempotency-Key ${Math.round((keyed.rps / spread.rps) * 100)} % of spread`,
        check,
        `${meets ? 'meets' : 'BELOW'} the targets (≥ ${TARGET.spreadRps} credits/s spread, ≥ ${TARGET.pgbenchShare * 100} % of pgbench -N, hot no slower than ${TARGET.hotSlowdown}× spread).`,
      ]),
].join('\n')
process.stdout.write(`${report}\n`)

const results = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(results, { recursive: true })
writeFileSync(
  join(results, `ledger-${Date.now()}.json`),
  JSON.stringify(
    {
      duration,
      connections,
      accounts: accountCount,
      load: [loadBefore, loadavg()[0]],
      pgbench: pg0,
      rows,
      walPerCredit,
      check,
    },
    null,
    2,
  ),
)
if (rows.some((r) => r.failures > 0) || check.includes('MISMATCH')) {
  process.stderr.write('some credits failed or the ledger does not add up\n')
  process.exitCode = 1
}
