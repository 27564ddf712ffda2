// `npm run bench -- console`: the console's list pages with 10,000 objects of each kind in one organization's
// sandbox, against a real `svc serve` process, on the embedded PGlite default and on PostgreSQL
// (BENCH_DATABASE_URL, default local). Target: every list page answers in under 200 ms server time.
//
// The organization is seeded in two steps: a few objects of each kind made through the API (so every row is one
// the service wrote, with its events, deliveries and audit rows), then cloned in SQL up to 10,000 per kind with new
// ids of the right prefix whose time part runs back from the originals (ids sort by time: src/lib/ids.ts). The
// benchmark measures page reads, not writes. A console owner then signs in (invitation → password → session) and
// each page is requested N times: the first page, a filtered page where the page has filters, and the page a few
// "Next page" links deep. The app sets no Server-Timing header, so the figure is the response time over a local
// keep-alive connection (headers and body), one request at a time.
//
//   npm run bench -- console [--only pglite|postgres] [--objects 10000] [--runs 30] [--deep 4] [--explain MS]
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { idHeadAt, type IdPrefix } from '../src/lib/ids.js'
import { iccidWithCheckDigit } from '../src/modules/esim/iccid.js'
import { OWNER_PASSWORD, signInOwner, type Browser } from './console-harness.js'
import { accessToken, createTenant, startServer, type BenchServer } from './platform-harness.js'

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback
}

const OBJECTS = Number(option('objects', '10000'))
const RUNS = Number(option('runs', '30'))
const DEEP = Number(option('deep', '4'))
const ONLY = option('only', '')
/** `--explain MS` (PostgreSQL): auto_explain logs the plan of every statement slower than MS to PostgreSQL's log. */
const EXPLAIN_MS = option('explain', '')
const BASE_SETS = 6
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** The same `query(text, values) → { rows }` on pg.Client and PGlite. */
interface Sql {
  query<T = any>(text: string, values?: unknown[]): Promise<{ rows: T[] }>
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP: the API (bearer token) and the console (cookies, forms)

async function api(
  server: BenchServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<any> {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text.slice(0, 400)}`)
  return text ? JSON.parse(text) : null
}

// ---------------------------------------------------------------------------------------------------------------
// Seed, step 1: a few objects of each kind through the API

interface Seeded {
  cardId: string
  cardholderId: string
  email: string
  endpointId: string
}

async function seedThroughApi(
  server: BenchServer,
  token: string,
  programId: string,
): Promise<Seeded> {
  const call = (method: string, path: string, body?: unknown) =>
    api(server, token, method, path, body)
  const endpoint = await call('POST', '/v1/webhook_endpoints', {
    url: 'https://hooks.example.com/svc',
    enabled_events: ['*'],
  })
  await call('POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
  await server.operator('POST', '/operator/v1/esim/inventory', {
    profiles: Array.from({ length: BASE_SETS * 2 }, () => ({
      iccid: iccidWithCheckDigit(
        `8944500${Array.from(randomBytes(11), (b) => String(b % 10)).join('')}`,
      ),
      smdp_address: 'smdp.test.example',
      matching_id: randomBytes(8).toString('hex').toUpperCase(),
    })),
  })
  const packages = (await call('GET', '/v1/esim/packages?country=FRA&region=local&status=on_sale'))
    .data as any[]
  const pkg = packages.find((p) => p.data_mb !== null) ?? packages[0]
  let last: Seeded | undefined
  for (let i = 0; i < BASE_SETS; i++) {
    const email = `bench.${i}.${randomBytes(3).toString('hex')}@example.com`
    const chd = await call('POST', '/v1/cardholders', {
      type: 'individual',
      first_name: 'Ada',
      last_name: `Lovelace ${i}`,
      email,
      reference: `bench-ref-${i}`,
      address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
      identity_document: { type: 'passport', number: `P${i}X` },
    })
    await call('POST', `/v1/cardholders/${chd.id}/kyc`, {
      status: 'approved',
      provider: 'Bench',
      verified_at: new Date(Date.now() - 60_000).toISOString(),
    })
    const acct = await call('POST', '/v1/accounts', {
      program_id: programId,
      cardholder_id: chd.id,
      currency: 'USD',
    })
    const card = await call('POST', '/v1/cards', {
      cardholder_id: chd.id,
      account_id: acct.id,
      form_factor: 'virtual',
      card_type: 'debit',
      embossed_name: 'ADA LOVELACE',
      delivery_address: {
        name: 'Ada',
        line1: '1 Main St',
        city: 'Springfield',
        postal_code: '12345',
        country: 'USA',
      },
    })
    await call('POST', `/v1/simulate/cards/${card.id}/issue`, {})
    await call('POST', `/v1/accounts/${acct.id}/credit`, { amount: 100_000 })
    const auth = await call('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 4000,
      currency: 'USD',
      merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
    })
    await call('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 1250,
      currency: 'USD',
      merchant: { name: 'Shop', mcc: '5411', country: 'USA' },
    })
    await call('POST', `/v1/simulate/authorizations/${auth.id}/capture`, {})
    const txn = (await call('GET', `/v1/transactions?authorization_id=${auth.id}`)).data[0]
    await call('POST', `/v1/simulate/transactions/${txn.id}/settle`, {})
    await call('POST', '/v1/disputes', { transaction_id: txn.id, reason: 'not_received' })
    await call('POST', '/v1/simulate/network_tokens', {
      card_id: card.id,
      wallet: i % 2 ? 'google_pay' : 'apple_pay',
    })
    await call('POST', '/v1/simulate/authentications', {
      card_id: card.id,
      amount: 1250,
      currency: 'USD',
      merchant: { name: 'Corner Books' },
    })
    await call('POST', '/v1/esim/orders', {
      package_id: pkg.id,
      cardholder_id: chd.id,
      account_id: acct.id,
      reference: `bench-order-${i}`,
    })
    await call('POST', '/v1/reports', { type: 'ledger', from: '2026-01-01', to: '2026-02-01' })
    last = { cardId: card.id, cardholderId: chd.id, email, endpointId: endpoint.id }
  }
  return last!
}

// ---------------------------------------------------------------------------------------------------------------
// Seed, step 2: clone each kind in SQL up to OBJECTS rows

/** What is cloned: the table, which of its rows are the organization's, and how many rows to reach. */
interface Kind {
  table: string
  scope: string
  target: number
}

function kinds(objects: number): Kind[] {
  const org = 'organization_id = $1'
  return [
    { table: 'cardholders', scope: org, target: objects },
    { table: 'accounts', scope: org, target: objects },
    { table: 'cards', scope: org, target: objects },
    { table: 'authorizations', scope: org, target: objects },
    { table: 'transactions', scope: org, target: objects },
    { table: 'disputes', scope: org, target: objects },
    { table: 'network_tokens', scope: org, target: objects },
    { table: 'authentications', scope: org, target: objects },
    { table: 'esim_orders', scope: org, target: objects },
    { table: 'esims', scope: org, target: objects },
    { table: 'reports', scope: org, target: objects },
    { table: 'events', scope: org, target: objects },
    {
      table: 'webhook_deliveries',
      scope: 'endpoint_id IN (SELECT id FROM webhook_endpoints WHERE organization_id = $1)',
      target: objects,
    },
    { table: 'oauth_clients', scope: org, target: Math.min(objects, 1000) },
    { table: 'audit_log', scope: org, target: objects },
    { table: 'users', scope: org, target: Math.min(objects, 200) },
  ]
}

interface Column {
  name: string
  type: string
  maxLength: number | null
}

async function columnsOf(sql: Sql, table: string): Promise<Column[]> {
  const { rows } = await sql.query<{
    column_name: string
    data_type: string
    character_maximum_length: number | null
  }>(
    `SELECT column_name, data_type, character_maximum_length FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  )
  return rows.map((r) => ({
    name: r.column_name,
    type: r.data_type,
    maxLength: r.character_maximum_length,
  }))
}

/** The columns each unique index of a table reads (the primary key included; expression indexes by the columns they name). */
async function uniqueIndexes(sql: Sql, table: string, columns: Column[]): Promise<string[][]> {
  const { rows } = await sql.query<{ def: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid AND c.relname = $1
      WHERE i.indisunique AND c.relnamespace = current_schema()::regnamespace`,
    [table],
  )
  return rows.map((r) => {
    const keys = r.def.slice(r.def.indexOf('(')).split(' WHERE ')[0]
    return columns.map((c) => c.name).filter((name) => new RegExp(`\\b${name}\\b`).test(keys))
  })
}

/** Foreign keys of a table: column → referenced table (single-column keys). */
async function foreignKeys(sql: Sql, table: string): Promise<Map<string, string>> {
  const { rows } = await sql.query<{ col: string; ref: string }>(
    `SELECT a.attname AS col, r.relname AS ref
       FROM pg_constraint f
       JOIN pg_class c ON c.oid = f.conrelid AND c.relname = $1
       JOIN pg_class r ON r.oid = f.confrelid
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = f.conkey[1]
      WHERE f.contype = 'f' AND array_length(f.conkey, 1) = 1`,
    [table],
  )
  return new Map(rows.map((r) => [r.col, r.ref]))
}

function randomTail(): string {
  const bytes = randomBytes(16)
  return Array.from(bytes, (b) => ALPHABET[b & 31]).join('')
}

const TEXT = new Set(['text', 'character varying', 'character'])
/** Columns a clone keeps as they are: they place the row (organization, environment) or are one of a few values. */
const KEEP = new Set([
  'organization_id',
  'environment',
  'status',
  'type',
  'kind',
  'currency',
  'wallet',
  'role',
])

/**
 * Clones the organization's rows of `kind.table` up to `kind.target`: row i copies source row i mod n, with a new
 * id (the source's prefix, a time 1 s earlier per row below the oldest original, so the clones are older and ids
 * keep sorting by time), `created_at` set to that time, and each unique index made to hold by changing one of its
 * columns: a text column gets a numeric suffix, a column referencing a table cloned before takes that table's
 * i-th clone.
 */
async function cloneKind(
  sql: Sql,
  organizationId: string,
  kind: Kind,
  clones: Map<string, string[]>,
): Promise<number> {
  const { rows: sources } = await sql.query<{ id: string; created_at: Date | string | null }>(
    `SELECT id, ${(await columnsOf(sql, kind.table)).some((c) => c.name === 'created_at') ? 'created_at' : 'NULL AS created_at'} FROM ${kind.table} WHERE ${kind.scope} ORDER BY id`,
    [organizationId],
  )
  if (!sources.length) throw new Error(`no ${kind.table} of the organization to clone`)
  const need = kind.target - sources.length
  if (need <= 0) return sources.length
  const columns = await columnsOf(sql, kind.table)
  const fks = await foreignKeys(sql, kind.table)
  const uniques = (await uniqueIndexes(sql, kind.table, columns)).filter(
    (cols) => !cols.includes('id'),
  )
  const changed = new Map<string, 'suffix' | 'clone'>()
  for (const cols of uniques) {
    if (cols.some((c) => changed.has(c))) continue
    const text = [...cols]
      .reverse()
      .find(
        (c) =>
          !fks.has(c) && !KEEP.has(c) && TEXT.has(columns.find((x) => x.name === c)?.type ?? ''),
      )
    if (text) {
      changed.set(text, 'suffix')
      continue
    }
    const cloned = cols.find((c) => fks.has(c) && clones.has(fks.get(c)!))
    if (cloned) {
      changed.set(cloned, 'clone')
      continue
    }
    throw new Error(`${kind.table}: cannot keep unique (${cols.join(', ')}) when cloning`)
  }
  const prefix = sources[0].id.split('_')[0] as IdPrefix
  const oldest = Math.min(
    ...sources.map((s) => (s.created_at ? new Date(s.created_at).getTime() : Date.now())),
  )
  const made: string[] = []
  const BATCH = 2000
  for (let start = 0; start < need; start += BATCH) {
    const n = Math.min(BATCH, need - start)
    const ids: string[] = []
    const srcs: string[] = []
    const ats: string[] = []
    const ns: number[] = []
    const refs: Record<string, string[]> = {}
    for (let k = 0; k < n; k++) {
      const i = start + k
      const at = new Date(oldest - (need - i) * 1000)
      ids.push(idHeadAt(prefix, at) + randomTail())
      srcs.push(sources[i % sources.length].id)
      ats.push(at.toISOString())
      ns.push(i)
      for (const [col, how] of changed) {
        if (how !== 'clone') continue
        const pool = clones.get(fks.get(col)!)!
        ;(refs[col] ??= []).push(pool[i % pool.length])
      }
    }
    const refCols = Object.keys(refs)
    const select = columns.map((c) => {
      const q = `"${c.name}"`
      if (c.name === 'id') return 'n.id'
      if (c.name === 'created_at') return 'n.at'
      const how = changed.get(c.name)
      if (how === 'clone') return `n.ref_${refCols.indexOf(c.name)}`
      if (how === 'suffix') {
        const suffix = `'-' || n.i::text`
        return c.maxLength
          ? `CASE WHEN s.${q} IS NULL THEN NULL ELSE left(s.${q}, ${c.maxLength} - length(${suffix})) || ${suffix} END`
          : `CASE WHEN s.${q} IS NULL THEN NULL ELSE s.${q} || ${suffix} END`
      }
      return `s.${q}`
    })
    const values: unknown[] = [ids, srcs, ats, ns, ...refCols.map((c) => refs[c])]
    const unnest = `unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]${refCols.map((_, j) => `, $${5 + j}::text[]`).join('')}) AS n(id, src, at, i${refCols.map((_, j) => `, ref_${j}`).join('')})`
    await sql.query(
      `INSERT INTO ${kind.table} (${columns.map((c) => `"${c.name}"`).join(', ')})
       SELECT ${select.join(', ')} FROM ${unnest} JOIN ${kind.table} s ON s.id = n.src`,
      values,
    )
    made.push(...ids)
  }
  clones.set(kind.table, made)
  return sources.length + need
}

async function cloneAll(sql: Sql, organizationId: string): Promise<string[]> {
  const clones = new Map<string, string[]>()
  const lines: string[] = []
  for (const kind of kinds(OBJECTS)) {
    const started = performance.now()
    const total = await cloneKind(sql, organizationId, kind, clones)
    lines.push(`${kind.table}: ${total} (${Math.round(performance.now() - started)} ms)`)
    process.stdout.write(`  seeded ${lines.at(-1)}\n`)
  }
  await sql.query('ANALYZE')
  return lines
}

// ---------------------------------------------------------------------------------------------------------------
// Measure

interface PageCase {
  label: string
  path: string
  deep?: boolean
}

function pageCases(seeded: Seeded): PageCase[] {
  return [
    { label: 'cardholders', path: '/console/cardholders' },
    { label: 'cardholders ?kyc_status=approved', path: '/console/cardholders?kyc_status=approved' },
    { label: 'cardholders deep', path: '/console/cardholders', deep: true },
    { label: 'accounts', path: '/console/accounts' },
    {
      label: 'accounts ?cardholder_id',
      path: `/console/accounts?cardholder_id=${seeded.cardholderId}`,
    },
    { label: 'accounts deep', path: '/console/accounts', deep: true },
    { label: 'cards', path: '/console/cards' },
    { label: 'cards ?status=active', path: '/console/cards?status=active' },
    { label: 'cards deep', path: '/console/cards', deep: true },
    { label: 'authorizations', path: '/console/authorizations' },
    { label: 'authorizations ?status=closed', path: '/console/authorizations?status=closed' },
    { label: 'authorizations ?card_id', path: `/console/authorizations?card_id=${seeded.cardId}` },
    { label: 'authorizations deep', path: '/console/authorizations', deep: true },
    { label: 'transactions', path: '/console/transactions' },
    { label: 'transactions ?status=settled', path: '/console/transactions?status=settled' },
    { label: 'transactions deep', path: '/console/transactions', deep: true },
    { label: 'disputes', path: '/console/disputes' },
    { label: 'disputes ?status=open', path: '/console/disputes?status=open' },
    { label: 'disputes deep', path: '/console/disputes', deep: true },
    { label: 'network tokens', path: '/console/network-tokens' },
    { label: 'network tokens ?wallet=apple_pay', path: '/console/network-tokens?wallet=apple_pay' },
    { label: 'network tokens deep', path: '/console/network-tokens', deep: true },
    { label: '3-D Secure', path: '/console/authentications' },
    { label: '3-D Secure ?status=pending', path: '/console/authentications?status=pending' },
    { label: '3-D Secure deep', path: '/console/authentications', deep: true },
    { label: 'eSIM orders', path: '/console/esim/orders' },
    { label: 'eSIM orders ?status=completed', path: '/console/esim/orders?status=completed' },
    { label: 'eSIM orders deep', path: '/console/esim/orders', deep: true },
    { label: 'eSIMs', path: '/console/esims' },
    { label: 'eSIMs deep', path: '/console/esims', deep: true },
    { label: 'reports', path: '/console/reports' },
    { label: 'reports ?type=ledger', path: '/console/reports?type=ledger' },
    { label: 'reports deep', path: '/console/reports', deep: true },
    { label: 'events', path: '/console/developers/events' },
    {
      label: 'events ?type=cardholder.created',
      path: '/console/developers/events?type=cardholder.created',
    },
    { label: 'events deep', path: '/console/developers/events', deep: true },
    { label: 'webhook deliveries', path: `/console/developers/webhooks/${seeded.endpointId}` },
    {
      label: 'webhook deliveries ?status=failed',
      path: `/console/developers/webhooks/${seeded.endpointId}?status=failed`,
    },
    {
      label: 'webhook deliveries deep',
      path: `/console/developers/webhooks/${seeded.endpointId}`,
      deep: true,
    },
    { label: 'API clients', path: '/console/developers/api-clients' },
    { label: 'API clients deep', path: '/console/developers/api-clients', deep: true },
    { label: 'audit log', path: '/console/audit' },
    { label: 'audit log deep', path: '/console/audit', deep: true },
    { label: 'team', path: '/console/team' },
    { label: 'search by email', path: `/console/search?q=${encodeURIComponent(seeded.email)}` },
  ]
}

/** The "Next page" / "Older" link of a page's pager, if any. */
function nextLink(body: string): string | null {
  const pager = /<nav class="pager"[^>]*>([\s\S]*?)<\/nav>/.exec(body)?.[1] ?? ''
  const link = /<a href="([^"]*)">(?:Next page|Older)<\/a>/.exec(pager)?.[1]
  return link ? link.replace(/&amp;/g, '&') : null
}

function rowsOf(body: string): number {
  return [...body.matchAll(/<tbody>([\s\S]*?)<\/tbody>/g)].reduce(
    (n, m) => n + (m[1].match(/<tr[\s>]/g)?.length ?? 0),
    0,
  )
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

interface PageFigures {
  label: string
  path: string
  status: number
  rows: number
  p50: number
  p95: number
  max: number
}

async function measurePages(browser: Browser, seeded: Seeded): Promise<PageFigures[]> {
  const out: PageFigures[] = []
  // One pass over every page first: the server's code paths and the database's pages are warm before any is timed.
  for (const c of pageCases(seeded)) await browser.get(c.path)
  for (const c of pageCases(seeded)) {
    let path = c.path
    if (c.deep) {
      for (let d = 0; d < DEEP; d++) {
        const next = nextLink((await browser.get(path)).body)
        if (!next) break
        path = next
      }
    }
    for (let w = 0; w < 3; w++) await browser.get(path)
    const times: number[] = []
    let last = { status: 0, body: '' }
    for (let r = 0; r < RUNS; r++) {
      const res = await browser.get(path)
      times.push(res.ms)
      last = res
    }
    times.sort((a, b) => a - b)
    if (process.env.BENCH_DUMP)
      writeFileSync(
        join(process.env.BENCH_DUMP, `${c.label.replace(/[^a-z0-9]+/gi, '-')}.html`),
        last.body,
      )
    const f: PageFigures = {
      label: c.label,
      path,
      status: last.status,
      rows: rowsOf(last.body),
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      max: times.at(-1)!,
    }
    out.push(f)
    process.stdout.write(
      `  ${f.label.padEnd(40)} ${String(f.status).padStart(3)} rows ${String(f.rows).padStart(3)}  p50 ${f.p50.toFixed(1).padStart(6)}  p95 ${f.p95.toFixed(1).padStart(6)}  max ${f.max.toFixed(1).padStart(6)}  ${f.path.length > 90 ? `${f.path.slice(0, 90)}…` : f.path}\n`,
    )
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------

async function runMode(mode: 'pglite' | 'postgres'): Promise<PageFigures[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-console-bench-'))
  const env: Record<string, string> = {
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_RELEASES: 'three_d_secure',
    ...(mode === 'pglite' ? { DATABASE_URL: '', DATA_DIR: dataDir } : {}),
  }
  process.stdout.write(`\n-- ${mode}: seeding through the API\n`)
  let server = await startServer(env)
  try {
    const tenant = await createTenant(server)
    const token = await accessToken(tenant)
    const seeded = await seedThroughApi(server, token, tenant.programIds[0])
    const { browser, email } = await signInOwner(server, tenant.organizationId)

    process.stdout.write(`-- ${mode}: cloning to ${OBJECTS} of each kind\n`)
    if (mode === 'postgres') {
      const client = new pg.Client({ connectionString: server.databaseUrl })
      await client.connect()
      try {
        await cloneAll(client, tenant.organizationId)
        if (EXPLAIN_MS) {
          // Plans of the statements slower than EXPLAIN_MS go to PostgreSQL's own log (auto_explain), for the
          // server's connections: they are closed here and the pool opens new ones with the setting.
          const db = new URL(server.databaseUrl).pathname.slice(1)
          await client.query(`ALTER DATABASE ${db} SET session_preload_libraries = 'auto_explain'`)
          await client.query(
            `ALTER DATABASE ${db} SET auto_explain.log_min_duration = '${Number(EXPLAIN_MS)}ms'`,
          )
          await client.query(`ALTER DATABASE ${db} SET auto_explain.log_analyze = on`)
          await client.query(`ALTER DATABASE ${db} SET auto_explain.log_buffers = on`)
          await client.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [db],
          )
        }
      } finally {
        await client.end()
      }
    } else {
      // The embedded database belongs to the server process: stop it, write, start it again on the same files.
      await server.stop()
      const { PGlite } = await import('@electric-sql/pglite')
      const db = new PGlite(join(dataDir, 'pgdata'))
      await db.waitReady
      try {
        await cloneAll(db, tenant.organizationId)
      } finally {
        await db.close()
      }
      server = await startServer(env)
      browser.baseUrl = server.baseUrl
      const signedIn = await browser.submit('/console/sign-in', { email, password: OWNER_PASSWORD })
      if (signedIn.status !== 303) throw new Error(`sign-in failed: ${signedIn.status}`)
    }
    await server.settle()
    process.stdout.write(
      `-- ${mode}: ${RUNS} requests per page after 3 warm-ups (ms over a local connection)\n`,
    )
    return await measurePages(browser, seeded)
  } finally {
    await server.stop()
  }
}

function table(byMode: Map<string, PageFigures[]>): string {
  const modes = [...byMode.keys()]
  const first = byMode.get(modes[0])!
  const head = `| page | rows | ${modes.map((m) => `${m} p50 / p95 / max ms`).join(' | ')} |\n|---|---:|${modes.map(() => '---:').join('|')}|`
  const lines = first.map(
    (f, i) =>
      `| ${f.label} | ${f.rows} | ${modes
        .map((m) => {
          const g = byMode.get(m)![i]
          const flag = g.p95 >= 200 ? ' ⚠' : ''
          return `${g.status === 200 ? '' : `(${g.status}) `}${g.p50.toFixed(1)} / ${g.p95.toFixed(1)} / ${g.max.toFixed(1)}${flag}`
        })
        .join(' | ')} |`,
  )
  return [head, ...lines].join('\n')
}

const byMode = new Map<string, PageFigures[]>()
for (const mode of ['pglite', 'postgres'] as const) {
  if (ONLY && ONLY !== mode) continue
  byMode.set(mode, await runMode(mode))
}
const md = table(byMode)
process.stdout.write(`\n${md}\n`)
const over = [...byMode].flatMap(([m, fs]) =>
  fs
    .filter((f) => f.p95 >= 200 || f.status !== 200)
    .map((f) => `${m}: ${f.label} (${f.status}, p95 ${f.p95.toFixed(1)} ms)`),
)
process.stdout.write(
  over.length
    ? `\nover 200 ms p95 or not 200:\n  ${over.join('\n  ')}\n`
    : '\nevery page under 200 ms p95\n',
)
const dir = join(process.cwd(), 'bench/results')
mkdirSync(dir, { recursive: true })
writeFileSync(
  join(dir, `console-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  JSON.stringify(Object.fromEntries(byMode), null, 2),
)
