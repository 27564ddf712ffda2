// `npm run bench -- embedded-start`: how long `npm start` takes to print its banner when the embedded database in
// DATA_DIR already holds about 100,000 objects (target: within 5 s), and that the API then answers as before.
//
// A DATA_DIR is prepared once per run: `svc serve` on it makes the templates through the API (an organization, a
// webhook endpoint, cards, authorizations, events), the server stops, and the scale seed (bench/scale-seed-harness.ts)
// writes the rest straight into the embedded database at a small size: 10,000 cardholders, accounts and cards,
// 31,000 ledger entries, 20,000 authorizations, 20,000 events and their deliveries, 10,000 idempotency keys. Then
// `node bin/svc.js serve` (what `npm start` runs) is started `--runs` times on that folder, timed from spawn to
// the banner's first line, and a list and a retrieval are read through the API before it stops.
//
//   npm run bench -- embedded-start [--runs 3]
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { accessToken, createTenant, startServer } from './platform-harness.js'
import { makeThroughApi } from './scale-api-harness.js'
import { FULL_SEED, pgliteSql, seedScale, type SeedCounts } from './scale-seed-harness.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } })
const runs = Number(values.runs)
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TARGET_MS = 5000
const counts: SeedCounts = {
  ...FULL_SEED, cardholders: 10_000, entriesPerAccount: 3, hotAccountEntries: 1_000, authorizations: 20_000,
  events: 20_000, idempotencyKeys: 10_000, smallOrganizations: 10,
}
const log = (line: string) => process.stdout.write(`${line}\n`)

const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-start-'))
const masterKey = randomBytes(32).toString('base64')
log(`-- preparing ${dataDir}: templates through the API`)
const server = await startServer({ DATABASE_URL: '', DATA_DIR: dataDir, SVC_MASTER_KEY: masterKey, SVC_DISABLE_WORKER: 'true' })
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
const seed = await seedScale(pgliteSql(db), {
  organizationId: client.organizationId, programId: client.programIds[0], endpointId: made.endpointId,
  cardholderId: made.cardholderId, accountId: made.accountId, cardId: made.cardId,
}, counts, log)
const objects = seed.lines.reduce((sum, line) => sum + Number(/: ([\d,]+) rows/.exec(line)?.[1].replaceAll(',', '') ?? 0), 0)
log(`-- ${objects.toLocaleString('en-US')} rows written in ${seed.seconds.toFixed(1)} s`)

interface Start { bannerMs: number; listMs: number; getMs: number; status: string }

/** `svc serve` as `npm start` runs it, timed to the banner; then a list and a retrieval through the API. */
async function startOnce(port: number): Promise<Start> {
  const started = performance.now()
  const child = spawn(process.execPath, [join(ROOT, 'bin/svc.js'), 'serve'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', BASE_URL: `http://127.0.0.1:${port}`, SVC_MASTER_KEY: masterKey, LOG_LEVEL: 'warn' },
  })
  let output = ''
  const bannerMs = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('svc is listening on')) resolve(performance.now() - started)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${output}`)))
    setTimeout(() => reject(new Error(`no banner after 60 s:\n${output}`)), 60_000).unref()
  })
  const tenant = { ...client!, tokenUrl: `http://127.0.0.1:${port}/oauth/token` }
  const token = await accessToken(tenant)
  const t0 = performance.now()
  const list = await fetch(`http://127.0.0.1:${port}/v1/cards?limit=100`, { headers: { authorization: `Bearer ${token}` } })
  const page = await list.json() as { data: { id: string }[] }
  const listMs = performance.now() - t0
  const t1 = performance.now()
  const one = await fetch(`http://127.0.0.1:${port}/v1/cards/${page.data.at(-1)!.id}`, { headers: { authorization: `Bearer ${token}` } })
  await one.text()
  const getMs = performance.now() - t1
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
  return { bannerMs, listMs, getMs, status: `${list.status}/${one.status}, ${page.data.length} cards on the page` }
}

const results: Start[] = []
for (let i = 0; i < runs; i++) {
  const r = await startOnce(20_000 + Math.floor(Math.random() * 20_000))
  results.push(r)
  log(`  start ${i + 1}: banner after ${Math.round(r.bannerMs)} ms; GET /v1/cards?limit=100 ${Math.round(r.listMs)} ms, GET /v1/cards/{id} ${Math.round(r.getMs)} ms (${r.status})`)
}
const worst = Math.max(...results.map((r) => r.bannerMs))
log([
  '',
  `svc embedded start — ${new Date().toISOString()}`,
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg()[0].toFixed(1)}; ${objects.toLocaleString('en-US')} rows in ${dataDir}`,
  `slowest banner ${Math.round(worst)} ms (target ≤ ${TARGET_MS} ms): ${worst <= TARGET_MS ? 'met' : 'NOT met'}`,
].join('\n'))
const dir = join(ROOT, 'bench', 'results')
mkdirSync(dir, { recursive: true })
writeFileSync(join(dir, `embedded-start-${Date.now()}.json`), JSON.stringify({ counts, objects, results }, null, 2))
if (worst > TARGET_MS) process.exitCode = 1
