// The scale benchmark's seed: a year of a card program written straight into PostgreSQL with `generate_series`,
// not through the API. A few objects of each kind are first made through the API (templates: every column as the
// service writes it); each table is then filled with copies of its templates, row g copying template g mod n, with
// the columns that place a row overridden in SQL: its id (the type's prefix, a time part that follows its
// created_at — ids sort by time, src/lib/ids.ts — and the row number in hexadecimal, which keeps ids unique),
// its times (spread over 400 days, children after their parents), its organization (one row in ten goes to one of
// the small organizations) and the ids of the rows it belongs to, which are computed the same way and need no
// lookup. Secondary indexes of the big tables are dropped while they fill and built again after (a sorted build
// is many times faster than as many inserts into each index).
import { performance } from 'node:perf_hooks'
import { createPrivateKey } from 'node:crypto'
import pg from 'pg'
import { benchDatabaseUrl, type BenchClient } from './platform-harness.js'
import type { Made } from './scale-api-harness.js'

export interface SeedCounts {
  cardholders: number
  /** Each cardholder has one account and one card. */
  entriesPerAccount: number
  /** Ledger entries of the one account whose entry list is measured. */
  hotAccountEntries: number
  authorizations: number
  events: number
  idempotencyKeys: number
  smallOrganizations: number
  days: number
}

export const FULL_SEED: SeedCounts = {
  cardholders: 1_000_000,
  entriesPerAccount: 10,
  hotAccountEntries: 100_000,
  authorizations: 5_000_000,
  events: 10_000_000,
  idempotencyKeys: 5_000_000,
  smallOrganizations: 1_000,
  days: 400,
}

/** What the API made first, whose rows the seed copies. */
export interface SeedTemplates {
  organizationId: string
  programId: string
  endpointId: string
  cardholderId: string
  accountId: string
  cardId: string
}

export interface SeedResult {
  lines: string[]
  hotAccountId: string
  seconds: number
}

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const CHUNK = 1_000_000

/** SQL helpers the seed uses; dropped when it ends. */
const FUNCTIONS = [
  `CREATE OR REPLACE FUNCTION bench_t32(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ${[
    45, 40, 35, 30, 25, 20, 15, 10, 5, 0,
  ]
    .map((s) => `substr('${ALPHABET}', ((ms >> ${s}) & 31)::int + 1, 1)`)
    .join(' || ')} $$`,
  `CREATE OR REPLACE FUNCTION bench_id(p text, at timestamptz, n bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
    $$ SELECT p || '_' || bench_t32((extract(epoch FROM at) * 1000)::bigint) || lpad(upper(to_hex(n)), 16, '0') $$`,
]

/** What the seed needs of a connection: pg's Client, or the embedded database through `pgliteSql`. */
export interface SeedSql {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>
  end(): Promise<void>
}

/** The embedded database (a PGlite instance) as a `SeedSql`. */
export function pgliteSql(db: {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; affectedRows?: number }>
  close(): Promise<void>
}): SeedSql {
  return {
    query: async (text, values) => {
      const r = await db.query(text, values)
      return { rows: r.rows, rowCount: r.affectedRows ?? null }
    },
    end: () => db.close(),
  }
}

async function connect(target: string | SeedSql): Promise<SeedSql> {
  if (typeof target !== 'string') return target
  const c = new pg.Client({ connectionString: target })
  await c.connect()
  return c
}

export async function seedScale(
  target: string | SeedSql,
  t: SeedTemplates,
  counts: SeedCounts,
  log: (line: string) => void,
): Promise<SeedResult> {
  const c = await connect(target)
  const started = performance.now()
  const lines: string[] = []
  const step = async (label: string, work: () => Promise<number>) => {
    const t0 = performance.now()
    const rows = await work()
    const line = `${label}: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`
    lines.push(line)
    log(`  ${line}`)
  }
  try {
    for (const setting of [
      'synchronous_commit = off',
      "maintenance_work_mem = '1GB'",
      "work_mem = '256MB'",
    ])
      await c.query(`SET ${setting}`).catch(() => undefined)
    for (const f of FUNCTIONS) await c.query(f)
    const N = counts.cardholders
    const S = counts.smallOrganizations
    // Times: `now - days` to a minute ago. Cardholder i is made at at(i); its account 1 s and its card 2 s later.
    await c.query(`CREATE TEMP TABLE bench_clock AS SELECT now() - interval '${counts.days} days' AS t0,
      (interval '${counts.days} days' - interval '1 minute') AS span`)
    const at = (i: string) => `(k.t0 + k.span * (${i})::float8 / ${N})`
    const orgOf = (i: string) =>
      `(CASE WHEN (${i}) % 10 = 0 THEN 1 + ((${i}) / 10) % ${S} ELSE 0 END)`
    const chd = (i: string) => `bench_id('chd', ${at(i)}, ${i})`
    const acct = (i: string) => `bench_id('acct', ${at(i)} + interval '1 second', ${i})`
    const card = (i: string) => `bench_id('card', ${at(i)} + interval '2 seconds', ${i})`

    await step('organizations and programs (small organizations)', async () => {
      await c.query(
        `CREATE TEMP TABLE bench_orgs (k int PRIMARY KEY, org text, program text, endpoint text)`,
      )
      await c.query(`INSERT INTO bench_orgs VALUES (0, $1, $2, $3)`, [
        t.organizationId,
        t.programId,
        t.endpointId,
      ])
      await c.query(`INSERT INTO bench_orgs SELECT g, bench_id('org', now() - interval '${counts.days + 1} days', g),
        bench_id('prog', now() - interval '${counts.days + 1} days', g), bench_id('whe', now() - interval '${counts.days + 1} days', g)
        FROM generate_series(1, ${S}) g`)
      await c.query(
        `INSERT INTO organizations (id, name, created_at) SELECT org, 'Small organization ' || k, now() - interval '${counts.days + 1} days' FROM bench_orgs WHERE k > 0`,
      )
      await copyRows(c, 'programs', `id = '${t.programId}'`, `bench_orgs o`, 'o.k > 0', {
        id: 'o.program',
        organization_id: 'o.org',
        name: `'Small program ' || o.k`,
      })
      await copyRows(c, 'webhook_endpoints', `id = '${t.endpointId}'`, `bench_orgs o`, 'o.k > 0', {
        id: 'o.endpoint',
        organization_id: 'o.org',
      })
      return S * 3
    })

    const orgJoin = (i: string) => `JOIN bench_orgs o ON o.k = ${orgOf(i)} CROSS JOIN bench_clock k`

    await step('cardholders', () =>
      fill(c, 'cardholders', `id = '${t.cardholderId}'`, N, orgJoin('g'), {
        id: chd('g'),
        organization_id: 'o.org',
        email: `'seed' || g || '@seed.example'`,
        phone_number: 'NULL',
        reference: `'seed-' || g`,
        created_at: at('g'),
        updated_at: at('g'),
      }),
    )
    await step('accounts', () =>
      fill(c, 'accounts', `id = '${t.accountId}'`, N, orgJoin('g'), {
        id: acct('g'),
        organization_id: 'o.org',
        program_id: 'o.program',
        cardholder_id: chd('g'),
        held_balance: '0',
        ledger_balance: `1000 * (CASE WHEN g = 1 THEN ${counts.hotAccountEntries} ELSE ${counts.entriesPerAccount} END)`,
        entry_seq: `(CASE WHEN g = 1 THEN ${counts.hotAccountEntries} ELSE ${counts.entriesPerAccount} END)`,
        block_reason: 'NULL',
        block_note: 'NULL',
        created_at: `${at('g')} + interval '1 second'`,
        updated_at: `${at('g')} + interval '1 second'`,
      }),
    )
    await step('cards', () =>
      fill(c, 'cards', `id = '${t.cardId}'`, N, orgJoin('g'), {
        id: card('g'),
        organization_id: 'o.org',
        program_id: 'o.program',
        cardholder_id: chd('g'),
        account_id: acct('g'),
        processor_reference: `'seed-' || g`,
        last4: `lpad((g % 10000)::text, 4, '0')`,
        replacement_for: 'NULL',
        replaced_by: 'NULL',
        created_at: `${at('g')} + interval '2 seconds'`,
        updated_at: `${at('g')} + interval '2 seconds'`,
        issued_at: `${at('g')} + interval '2 seconds'`,
      }),
    )
    // Entry j of account i (g = j·N + i): a credit of 10.00 at an even step between the account's creation and now.
    const E = counts.entriesPerAccount
    const entryAt = `(${at('i')} + interval '1 second' + (k.t0 + k.span - ${at('i')}) * ((j + 1)::float8 / ${E + 1}))`
    await step('ledger entries', () =>
      fill(
        c,
        'ledger_entries',
        `account_id = '${t.accountId}' AND seq = 1`,
        N * E,
        `CROSS JOIN LATERAL (SELECT g % ${N} AS i, g / ${N} AS j) x JOIN bench_orgs o ON o.k = ${orgOf('x.i')} CROSS JOIN bench_clock k`,
        {
          id: `bench_id('le', ${entryAt}, g)`,
          account_id: acct('i'),
          organization_id: 'o.org',
          seq: 'j + 1',
          type: `'credit'`,
          amount: '1000',
          currency: `'USD'`,
          ledger_balance_after: '1000 * (j + 1)',
          held_balance_after: '0',
          available_balance_after: '1000 * (j + 1)',
          source_id: 'NULL',
          client_transaction_id: 'NULL',
          reference: 'NULL',
          description: 'NULL',
          created_at: entryAt,
        },
      ),
    )
    const hotAccountId = (await c.query(`SELECT ${acct('1')} AS id FROM bench_clock k`)).rows[0]
      .id as string
    const H = counts.hotAccountEntries - E
    const hotAt = `(k.t0 + k.span * 0.95 + k.span * 0.05 * (g::float8 / ${H}))`
    await step('ledger entries of the measured account', () =>
      fill(
        c,
        'ledger_entries',
        `account_id = '${t.accountId}' AND seq = 1`,
        H,
        `CROSS JOIN bench_clock k`,
        {
          id: `bench_id('le', ${hotAt}, ${N * E} + g)`,
          account_id: `'${hotAccountId}'`,
          organization_id: `'${t.organizationId}'`,
          seq: `${E + 1} + g`,
          type: `'credit'`,
          amount: '1000',
          currency: `'USD'`,
          ledger_balance_after: `1000 * (${E + 1} + g)`,
          held_balance_after: '0',
          available_balance_after: `1000 * (${E + 1} + g)`,
          source_id: 'NULL',
          client_transaction_id: 'NULL',
          reference: 'NULL',
          description: 'NULL',
          created_at: hotAt,
        },
      ),
    )
    const A = counts.authorizations
    const perCard = Math.max(1, Math.round(A / N))
    const authAt = `(${at('i')} + interval '3 seconds' + (k.t0 + k.span - ${at('i')}) * ((j + 1)::float8 / ${perCard + 1}))`
    await step('authorizations', () =>
      fill(
        c,
        'authorizations',
        `card_id = '${t.cardId}'`,
        A,
        `CROSS JOIN LATERAL (SELECT g % ${N} AS i, g / ${N} AS j) x JOIN bench_orgs o ON o.k = ${orgOf('x.i')} CROSS JOIN bench_clock k`,
        {
          id: `bench_id('auth', ${authAt}, g)`,
          organization_id: 'o.org',
          program_id: 'o.program',
          card_id: card('i'),
          account_id: acct('i'),
          network_token_id: 'NULL',
          hold_id: 'NULL',
          expires_at: 'NULL',
          created_at: authAt,
          updated_at: authAt,
          status: `(CASE WHEN t.status = 'pending' THEN 'closed' ELSE t.status END)`,
        },
      ),
    )
    const V = counts.events
    const eventAt = `(k.t0 + k.span * (g::float8 / ${V}))`
    await step('events', () =>
      fill(
        c,
        'events',
        `organization_id = '${t.organizationId}'`,
        V,
        `JOIN bench_orgs o ON o.k = ${orgOf(`g % ${N}`)} CROSS JOIN bench_clock k`,
        {
          id: `bench_id('evt', ${eventAt}, g)`,
          organization_id: 'o.org',
          created_at: eventAt,
        },
      ),
    )
    await step('webhook deliveries (delivered)', async () => {
      const drop = await dropSecondaryIndexes(c, 'webhook_deliveries')
      let rows = 0
      for (let from = 0; from < V; from += CHUNK) {
        const to = Math.min(V, from + CHUNK) - 1
        const r =
          await c.query(`INSERT INTO webhook_deliveries (event_id, endpoint_id, organization_id, environment, status, attempts, failures,
            next_attempt_at, first_failed_at, last_attempt_at, delivered_at, created_at, updated_at, id, event_type)
          SELECT e.id, o.endpoint, e.organization_id, e.environment, 'delivered', 1, 0, e.created_at, NULL, e.created_at + interval '1 second',
            e.created_at + interval '1 second', e.created_at, e.created_at + interval '1 second', bench_id('whd', e.created_at, g), e.type
          FROM generate_series(${from}, ${to}) g CROSS JOIN bench_clock k
          JOIN events e ON e.id = bench_id('evt', (k.t0 + k.span * (g::float8 / ${V})), g)
          JOIN bench_orgs o ON o.k = ${orgOf(`g % ${N}`)}`)
        rows += r.rowCount ?? 0
      }
      await drop()
      return rows
    })
    const K = counts.idempotencyKeys
    const keyAt = `(k.t0 + k.span * (g::float8 / ${K}))`
    await step('idempotency keys', () =>
      fill(
        c,
        'idempotency_keys',
        `organization_id = '${t.organizationId}'`,
        K,
        orgJoin(`g % ${N}`),
        {
          organization_id: 'o.org',
          key: `'seed-' || g`,
          created_at: keyAt,
        },
        'key',
      ),
    )
    // What autovacuum does to a table after a bulk insert (the visibility map, hint bits, statistics): a year of
    // production data has long been vacuumed, and a benchmark machine's PostgreSQL may run with autovacuum off.
    await step('VACUUM (ANALYZE)', async () => {
      await c.query('VACUUM (ANALYZE)')
      return 0
    })
    for (const f of ['bench_id(text, timestamptz, bigint)', 'bench_t32(bigint)'])
      await c.query(`DROP FUNCTION IF EXISTS ${f}`)
    return { lines, hotAccountId, seconds: (performance.now() - started) / 1000 }
  } finally {
    await c.end()
  }
}

/**
 * The empty database's lists, filled so that each has what the measurements read: the card copied `cards` times
 * (enough for a page 1,000 pages deep; ids whose time runs back from the template's, the same cardholder and
 * account, no card slot held) and the cardholder `cardholders` times (so that the console's first page of
 * cardholders shows a full page on both databases, not one row against 25).
 */
export async function fillEmptyLists(
  target: string | SeedSql,
  made: { cardId: string; cardholderId: string },
  counts: { cards: number; cardholders: number },
): Promise<void> {
  const c = await connect(target)
  try {
    for (const f of FUNCTIONS) await c.query(f)
    const at = (count: number) =>
      `(now() - interval '1 hour' - interval '1 second' * (${count} - g))`
    await fill(c, 'cards', `id = '${made.cardId}'`, counts.cards, '', {
      id: `bench_id('card', ${at(counts.cards)}, g)`,
      holds_card_slot: 'false',
      processor_reference: `'seed-' || g`,
      created_at: at(counts.cards),
      updated_at: at(counts.cards),
    })
    await fill(c, 'cardholders', `id = '${made.cardholderId}'`, counts.cardholders, '', {
      id: `bench_id('chd', ${at(counts.cardholders)}, g)`,
      email: `'seed' || g || '@seed.example'`,
      phone_number: 'NULL',
      reference: `'seed-' || g`,
      created_at: at(counts.cardholders),
      updated_at: at(counts.cardholders),
    })
    await c.query('ANALYZE cards')
    await c.query('ANALYZE cardholders')
    for (const f of ['bench_id(text, timestamptz, bigint)', 'bench_t32(bigint)'])
      await c.query(`DROP FUNCTION IF EXISTS ${f}`)
  } finally {
    await c.end()
  }
}

async function columnsOf(c: SeedSql, table: string): Promise<string[]> {
  const { rows } = await c.query(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  )
  return rows.map((r: { column_name: string }) => r.column_name)
}

/** Copies the template rows of `table` once per row of `source` (small tables: organizations' programs and endpoints). */
async function copyRows(
  c: SeedSql,
  table: string,
  template: string,
  source: string,
  where: string,
  overrides: Record<string, string>,
): Promise<void> {
  const cols = await columnsOf(c, table)
  await c.query(`INSERT INTO ${table} (${cols.map((x) => `"${x}"`).join(', ')})
    SELECT ${cols.map((x) => overrides[x] ?? `t."${x}"`).join(', ')} FROM ${source} CROSS JOIN (SELECT * FROM ${table} WHERE ${template} LIMIT 1) t WHERE ${where}`)
}

/**
 * Drops the indexes of a table that are neither its primary key nor unique, answering a function that builds
 * them again (the seed fills the table in between).
 */
async function dropSecondaryIndexes(c: SeedSql, table: string): Promise<() => Promise<void>> {
  const { rows } = await c.query(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS def FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_class r ON r.oid = x.indrelid WHERE r.relname = $1 AND NOT x.indisunique AND NOT x.indisprimary`,
    [table],
  )
  for (const r of rows) await c.query(`DROP INDEX ${r.name}`)
  return async () => {
    for (const r of rows) await c.query(r.def)
  }
}

/**
 * Inserts `count` rows into `table`, row g (0 ≤ g < count) a copy of template g mod n (the rows `template` selects,
 * by id) with `overrides` (SQL over g, the template t and whatever `joins` bring), one statement per million rows.
 */
async function fill(
  c: SeedSql,
  table: string,
  template: string,
  count: number,
  joins: string,
  overrides: Record<string, string>,
  order = 'id',
): Promise<number> {
  const cols = await columnsOf(c, table)
  await c.query(`DROP TABLE IF EXISTS bench_tpl`)
  await c.query(
    `CREATE TEMP TABLE bench_tpl AS SELECT (row_number() OVER (ORDER BY ${order}) - 1)::int AS tn, x.* FROM ${table} x WHERE ${template}`,
  )
  const n = Number((await c.query('SELECT count(*) AS n FROM bench_tpl')).rows[0].n)
  if (n === 0) throw new Error(`no template row of ${table} (${template})`)
  const rebuild = await dropSecondaryIndexes(c, table)
  let rows = 0
  for (let from = 0; from < count; from += CHUNK) {
    const to = Math.min(count, from + CHUNK) - 1
    const r = await c.query(`INSERT INTO ${table} (${cols.map((x) => `"${x}"`).join(', ')})
      SELECT ${cols.map((x) => overrides[x] ?? `t."${x}"`).join(', ')}
      FROM generate_series(${from}, ${to}) g JOIN bench_tpl t ON t.tn = (g % ${n})::int ${joins}`)
    rows += r.rowCount ?? 0
  }
  await rebuild()
  return rows
}

/** A database of the benchmark's PostgreSQL server by name. */
export function databaseUrl(name: string): string {
  const u = new URL(benchDatabaseUrl())
  u.pathname = `/${name}`
  return u.toString()
}

/** The large database of a seed size (1: the full seed), kept between runs. */
export function largeDatabase(size: number): { name: string; url: string } {
  const name = `svc_scale_${String(size).replace('.', '_')}`
  return { name, url: databaseUrl(name) }
}

/** What a seeded large database records of itself: the organization's client (with its key), the API-made ids. */
export interface LargeState {
  client: BenchClient
  made: Made
  hotAccountId: string
  seedLines: string[]
  seedSeconds: number
}

/** The state a finished seed recorded (of these counts, when given); null when the database is missing or unseeded. */
export async function readSeedState(url: string, counts?: SeedCounts): Promise<LargeState | null> {
  const c = new pg.Client({ connectionString: url })
  try {
    await c.connect()
  } catch {
    return null
  }
  try {
    const r = await c
      .query(
        `SELECT state FROM bench_scale_seed ${counts ? 'WHERE counts = $1::jsonb' : ''}`,
        counts ? [JSON.stringify(counts)] : [],
      )
      .catch(() => ({ rows: [] as { state: any }[] }))
    const state = r.rows[0]?.state
    if (!state) return null
    return { ...state, client: { ...state.client, key: createPrivateKey(state.client.privatePem) } }
  } finally {
    await c.end()
  }
}

/** Records a finished seed in its database (a table of the benchmark's own; the client's key as PEM). */
export async function writeSeedState(
  url: string,
  counts: SeedCounts,
  state: LargeState,
): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query('CREATE TABLE IF NOT EXISTS bench_scale_seed (counts jsonb, state jsonb)')
    const client = {
      ...state.client,
      key: undefined,
      privatePem: state.client.key.export({ format: 'pem', type: 'pkcs8' }).toString(),
    }
    await c.query('INSERT INTO bench_scale_seed VALUES ($1::jsonb, $2::jsonb)', [
      JSON.stringify(counts),
      JSON.stringify({ ...state, client }),
    ])
  } finally {
    await c.end()
  }
}
