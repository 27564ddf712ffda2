// The plans PostgreSQL chose for the list queries, on the large database: auto_explain (ANALYZE, BUFFERS) logs the
// plan of every statement of the server's connections to PostgreSQL's own log while each list is requested once;
// the plans of the statements reading the list's table are kept. A plan that reads the whole table (Seq Scan) or
// sorts it (Sort above a scan of more rows than a page) is flagged.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import {
  accessToken,
  benchDatabaseUrl,
  isLocalDatabase,
  type BenchClient,
  type BenchServer,
} from './platform-harness.js'

export interface ListPlan {
  request: string
  summary: string
  plan: string
  flagged: boolean
}

const LOG_DIR = '/var/log/postgresql'

function logFile(): string | null {
  if (!existsSync(LOG_DIR)) return null
  const files = readdirSync(LOG_DIR)
    .filter((f) => f.endsWith('.log'))
    .map((f) => join(LOG_DIR, f))
  return files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null
}

function readFrom(path: string, offset: number): string {
  const size = statSync(path).size
  const buf = Buffer.alloc(Math.max(0, size - offset))
  const fd = openSync(path, 'r')
  try {
    readSync(fd, buf, 0, buf.length, offset)
  } finally {
    closeSync(fd)
  }
  return buf.toString('utf8')
}

/** Each logged plan: its query text and its plan lines. */
function plansIn(text: string): { query: string; plan: string }[] {
  const out: { query: string; plan: string }[] = []
  for (const block of text.split(/\n(?=\S)/)) {
    if (!block.includes('plan:') || !block.includes('Query Text:')) continue
    const body = block
      .split('\n')
      .slice(1)
      .map((l) => l.replace(/^\t/, ''))
    const queryLines: string[] = []
    let i = 0
    for (; i < body.length; i++) {
      if (
        /^\s*(Limit|Index|Seq|Sort|Nested|Hash|Result|Aggregate|Bitmap|Subquery|Merge|Append|Unique|Gather|Insert|Update|Delete|Function|LockRows|CTE|WindowAgg|Incremental)/.test(
          body[i],
        )
      )
        break
      queryLines.push(body[i])
    }
    out.push({
      query: queryLines
        .join(' ')
        .replace(/^Query Text:\s*/, '')
        .replace(/\s+/g, ' '),
      plan: body.slice(i).join('\n'),
    })
  }
  return out
}

function summarize(plan: string): { summary: string; flagged: boolean } {
  const nodes = plan
    .split('\n')
    .map((l) =>
      /^\s*(?:->\s*)?([A-Z][A-Za-z ]+?)(?:\s+using\s+(\S+))?(?:\s+on\s+(\S+))?\s+\(/.exec(l),
    )
    .filter(Boolean)
    .map((m) => `${m![1]}${m![2] ? ` ${m![2]}` : ''}${!m![2] && m![3] ? ` on ${m![3]}` : ''}`)
  const seq = /Seq Scan/.test(plan)
  const sortRows = [...plan.matchAll(/Sort[^\n]*\(actual[^\n]*rows=(\d+)/g)].map((m) =>
    Number(m[1]),
  )
  const flagged = seq || sortRows.some((n) => n > 101)
  return { summary: nodes.join(' → ') + (flagged ? '  ⚠' : ''), flagged }
}

export async function explainLists(
  server: BenchServer,
  database: string,
  client: BenchClient,
  ids: { cardId: string; hotAccountId: string },
): Promise<ListPlan[]> {
  const path = logFile()
  if (!path || !isLocalDatabase(benchDatabaseUrl())) return []
  const admin = new pg.Client({ connectionString: benchDatabaseUrl() })
  await admin.connect()
  const settings = [
    "session_preload_libraries = 'auto_explain'",
    "auto_explain.log_min_duration = '0ms'",
    'auto_explain.log_analyze = on',
    'auto_explain.log_buffers = on',
  ]
  try {
    for (const s of settings) await admin.query(`ALTER DATABASE ${database} SET ${s}`)
    // The server's pool opens new connections, which load auto_explain with these settings.
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
      database,
    ])
    // A pooled connection just ended answers one request with an error: the first ones are retried.
    let token = ''
    for (let attempt = 0; !token; attempt++) {
      token = await accessToken(client).catch((err) => {
        if (attempt >= 10) throw err
        return ''
      })
    }
    const lists: { request: string; table: string }[] = [
      { request: '/v1/cards', table: 'cards' },
      { request: '/v1/cards?status=active', table: 'cards' },
      { request: '/v1/cardholders', table: 'cardholders' },
      { request: '/v1/accounts', table: 'accounts' },
      { request: `/v1/accounts/${ids.hotAccountId}/entries`, table: 'ledger_entries' },
      { request: '/v1/authorizations', table: 'authorizations' },
      { request: `/v1/authorizations?card_id=${ids.cardId}`, table: 'authorizations' },
      { request: '/v1/transactions', table: 'transactions' },
      { request: '/v1/events', table: 'events' },
      { request: '/v1/events?type=account.credited', table: 'events' },
      { request: '/v1/events?type=card.created', table: 'events' },
    ]
    const out: ListPlan[] = []
    for (const list of lists) {
      // Twice: the first request of a new connection also logs its own lookups (token, programs).
      await fetch(server.baseUrl + list.request, {
        headers: { authorization: `Bearer ${token}` },
      }).then((r) => r.text())
      const offset = statSync(path).size
      const res = await fetch(server.baseUrl + list.request, {
        headers: { authorization: `Bearer ${token}` },
      })
      await res.text()
      await new Promise((r) => setTimeout(r, 300))
      const mine = plansIn(readFrom(path, offset)).filter((p) =>
        new RegExp(`from "?${list.table}"?\\b`, 'i').test(p.query),
      )
      const plan =
        mine.map((p) => `Query: ${p.query}\n${p.plan}`).join('\n\n') || '(no plan logged)'
      const { summary, flagged } = mine.length
        ? summarize(mine.map((p) => p.plan).join('\n'))
        : { summary: '(no plan logged)', flagged: true }
      out.push({
        request: `GET ${list.request.replace(ids.hotAccountId, '{id}').replace(ids.cardId, '{card}')} (${res.status})`,
        summary,
        plan,
        flagged,
      })
    }
    return out
  } finally {
    for (const s of settings)
      await admin.query(`ALTER DATABASE ${database} RESET ${s.split(' = ')[0]}`)
    await admin.end()
  }
}
