/**
 * Tables have one owner (shared/design.md, "Shape": SQL touches only the module's own tables). Every table
 * the migrations create is assigned to one module or platform folder below; every SQL reference in src (Kysely
 * calls and raw SQL text) must name a table of the file's own module, or be one of the published write plans
 * listed in PUBLISHED_PLANS. Another module's data is reached through its index.ts, or through a hook.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, test } from 'node:test'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SRC = join(ROOT, 'src')
const MIGRATIONS = join(SRC, 'db', 'migrations')
/** Not modules: the schema's history, and the first-run seed (it writes every module's tables on purpose). */
const NOT_SCANNED = ['src/db/migrations/', 'src/seed/']

/** Who owns each table: a module (a folder of src/modules) or a platform folder of src. A new table is added here. */
const OWNERS: Record<string, string> = {
  organizations: 'oauth',
  access_tokens: 'oauth',
  oauth_clients: 'oauth',
  oauth_jtis: 'oauth',
  network_policies: 'oauth',
  programs: 'programs',
  cardholders: 'cardholders',
  kyc_attestations: 'kyc',
  kyc_documents: 'kyc',
  idempotency_keys: 'http',
  jobs: 'jobs',
  events: 'events',
  webhook_endpoints: 'webhooks',
  webhook_deliveries: 'webhooks',
  webhook_delivery_attempts: 'webhooks',
  processor_faults: 'processors',
  processor_operations: 'processors',
  sim_processor_objects: 'processors',
  sim_fx_rates: 'processors',
  sandbox_clocks: 'clocks',
  esim_sim_directives: 'esim-network',
  esim_sim_network_log: 'esim-network',
  accounts: 'accounts',
  ledger_entries: 'ledger',
  holds: 'ledger',
  cards: 'cards',
  card_pin_keys: 'cards',
  card_reveal_sessions: 'cards',
  card_secret_audit: 'cards',
  network_tokens: 'network-tokens',
  authentications: 'authentications',
  authorizations: 'authorizations',
  authorization_endpoints: 'authorizations',
  authorization_endpoint_attempts: 'authorizations',
  authorization_rules: 'authorization-rules',
  authorization_rule_activity: 'authorization-rules',
  authorization_rule_counters: 'authorization-rules',
  authorization_rule_targets: 'authorization-rules',
  authorization_rule_backtests: 'authorization-rules',
  transactions: 'transactions',
  disputes: 'disputes',
  esim_packages: 'esim',
  esim_top_ups: 'esim',
  esim_status_overrides: 'esim',
  esim_profiles: 'esim',
  esim_orders: 'esim',
  esims: 'esim',
  esim_bundles: 'esim',
  esim_alert_settings: 'esim',
  esim_usage_reports: 'esim',
  esim_h5_links: 'h5',
  reports: 'reports',
  report_parts: 'reports',
  users: 'users',
  user_invitations: 'users',
  console_sessions: 'users',
  console_sign_in_failures: 'users',
  audit_log: 'users',
}

interface Allowance {
  /** A file of src, or every file under a folder (`src/modules/ledger/**`). */
  files: string
  tables: string[]
  reason: string
}

/**
 * The published write plans: SQL of one module that names another's tables because one statement across
 * them is the point. Short on purpose; an entry no reference needs any more fails the test, so it is removed.
 */
const PUBLISHED_PLANS: Allowance[] = [
  {
    files: 'src/modules/ledger/**',
    tables: ['accounts'],
    reason:
      'the ledger is the only writer of the balance columns (ledger_balance, held_balance, entry_seq) and locks the account row it moves',
  },
  {
    files: 'src/modules/events/outbox.ts',
    tables: ['webhook_deliveries', 'jobs', 'webhook_endpoints'],
    reason:
      "the events module's plan: an event, its deliveries to the subscribed endpoints and their jobs in one statement",
  },
]

// ---------------------------------------------------------------------------------------------------------
// The tables the migrations create

/** Table names created (and not dropped since) by migration source text, in order of the files. */
export function tablesOfMigrations(sources: readonly string[]): Set<string> {
  const tables = new Set<string>()
  const name = String.raw`(?:IF\s+NOT\s+EXISTS\s+)?(?:"?public"?\.)?"?(\w+)"?`
  for (const text of sources) {
    const events: { at: number; apply: () => void }[] = []
    for (const m of text.matchAll(
      new RegExp(String.raw`\bCREATE\s+(?:UNLOGGED\s+|TEMP(?:ORARY)?\s+)?TABLE\s+${name}`, 'gi'),
    ))
      events.push({ at: m.index, apply: () => tables.add(m[1]) })
    for (const m of text.matchAll(/\.createTable\(\s*['"`](\w+)['"`]/g))
      events.push({ at: m.index, apply: () => tables.add(m[1]) })
    for (const m of text.matchAll(
      /\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:"?public"?\.)?"?(\w+)"?/gi,
    ))
      events.push({ at: m.index, apply: () => tables.delete(m[1]) })
    for (const m of text.matchAll(/\.dropTable\(\s*['"`](\w+)['"`]/g))
      events.push({ at: m.index, apply: () => tables.delete(m[1]) })
    for (const m of text.matchAll(
      /\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?"?(\w+)"?\s+RENAME\s+TO\s+"?(\w+)"?/gi,
    )) {
      events.push({
        at: m.index,
        apply: () => {
          if (tables.delete(m[1])) tables.add(m[2])
        },
      })
    }
    for (const e of events.sort((a, b) => a.at - b.at)) e.apply()
  }
  return tables
}

function migrationTables(): Set<string> {
  const files = readdirSync(MIGRATIONS)
    .filter((f) => f.endsWith('.ts'))
    .sort()
  return tablesOfMigrations(files.map((f) => readFileSync(join(MIGRATIONS, f), 'utf8')))
}

// ---------------------------------------------------------------------------------------------------------
// The scanner

export interface TableRef {
  line: number
  table: string
  via: string
}

/** Kysely builder methods whose first argument names a table (`'accounts'`, `'accounts as a'`, `['a', 'b']`). */
const KYSELY_TABLE_METHODS = new Set([
  'selectFrom',
  'insertInto',
  'replaceInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'using',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
  'crossJoin',
  'innerJoinLateral',
  'leftJoinLateral',
  'crossJoinLateral',
])

/** The table of a Kysely table expression: `accounts`, `accounts as a`, `public.accounts`. */
function kyselyTable(text: string): string {
  const first = text.trim().split(/\s+/)[0] ?? ''
  return first.includes('.') ? first.slice(first.lastIndexOf('.') + 1) : first
}

/** A table named after a SQL keyword; in raw SQL the words after FROM, JOIN, … and a few table functions. */
const SQL_KEYWORD = String.raw`\b(FROM|JOIN|UPDATE|INTO|TABLE|TRUNCATE|USING)\s+(?:ONLY\s+)?`
const QUALIFIED = String.raw`(?:"?public"?\.)?"?(\w+)"?`
/** One more item of a FROM list: `, b`, `, b AS x`, `, b x`. */
const FROM_LIST_ITEM = new RegExp(
  String.raw`^(?:\s+(?:AS\s+)?(?!(?:WHERE|JOIN|ON|LEFT|RIGHT|INNER|FULL|CROSS|ORDER|GROUP|LIMIT|FOR|WINDOW|RETURNING|SET|UNION|HAVING)\b)\w+)?\s*,\s*${QUALIFIED}`,
  'i',
)

/**
 * The table references in one segment of SQL text. `anyCase`: the text is SQL for certain (a `sql` template, a
 * driver query), so keywords match in any case; elsewhere only upper-case keywords count, so that prose such as
 * an error message ("… from accounts …") is not taken for SQL.
 */
function scanSqlText(
  text: string,
  tables: ReadonlySet<string>,
  anyCase: boolean,
): { index: number; table: string; via: string }[] {
  const flags = anyCase ? 'gi' : 'g'
  const found: { index: number; table: string; via: string }[] = []
  for (const m of text.matchAll(new RegExp(SQL_KEYWORD + QUALIFIED, flags))) {
    const keyword = m[1].toUpperCase()
    if (tables.has(m[2])) found.push({ index: m.index, table: m[2], via: keyword })
    if (keyword !== 'FROM' && keyword !== 'USING') continue
    // FROM a, b AS x, c: each item of the list.
    let rest = text.slice(m.index + m[0].length)
    let offset = m.index + m[0].length
    for (let item = FROM_LIST_ITEM.exec(rest); item; item = FROM_LIST_ITEM.exec(rest)) {
      if (tables.has(item[1]))
        found.push({ index: offset + item.index, table: item[1], via: keyword })
      offset += item[0].length
      rest = rest.slice(item[0].length)
    }
  }
  for (const m of text.matchAll(/\bto_regclass\(\s*'(?:public\.)?"?(\w+)"?'/gi))
    if (tables.has(m[1])) found.push({ index: m.index, table: m[1], via: 'to_regclass' })
  for (const m of text.matchAll(/'(?:public\.)?"?(\w+)"?'::regclass/gi))
    if (tables.has(m[1])) found.push({ index: m.index, table: m[1], via: 'regclass' })
  for (const m of text.matchAll(/::(\w+)\b/g))
    if (tables.has(m[1])) found.push({ index: m.index, table: m[1], via: 'row type' })
  return found
}

function isStringish(node: ts.Node): node is ts.StringLiteral | ts.NoSubstitutionTemplateLiteral {
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
}

/** True inside a `sql` tagged template, or in a string handed to a driver's `query(…)`. */
function isSqlContext(node: ts.Node): boolean {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (ts.isTaggedTemplateExpression(n)) return /^sql\b/.test(n.tag.getText())
    if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      n.expression.name.text === 'query'
    )
      return true
    if (ts.isBlock(n) || ts.isSourceFile(n)) return false
  }
  return false
}

/**
 * Every reference to a known table in one TypeScript source: Kysely calls with the table as a literal, `sql.table`,
 * and raw SQL in string and template literals (comments are not code and are skipped). Where a table name is
 * passed as a value (`sql.table(name)`, `selectFrom(name)`), every string literal of the file that is a table's
 * name counts as a reference too, so a lookup table of table names cannot hide one.
 */
export function scanSource(
  text: string,
  tables: ReadonlySet<string>,
  fileName = 'source.ts',
): TableRef[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const refs = new Map<string, TableRef>()
  const counted = new Set<ts.Node>()
  let dynamic = false
  const add = (pos: number, table: string, via: string) => {
    const line = sf.getLineAndCharacterOfPosition(pos).line + 1
    refs.set(`${line}:${table}`, { line, table, via })
  }
  const literalNames: ts.Node[] = []

  const tableArgument = (arg: ts.Expression | undefined, via: string) => {
    if (!arg) return
    if (isStringish(arg)) {
      counted.add(arg)
      const table = kyselyTable(arg.text)
      if (tables.has(table)) add(arg.getStart(sf), table, via)
    } else if (ts.isArrayLiteralExpression(arg)) {
      for (const el of arg.elements) tableArgument(el, via)
    } else if (
      ts.isIdentifier(arg) ||
      ts.isPropertyAccessExpression(arg) ||
      ts.isElementAccessExpression(arg) ||
      ts.isConditionalExpression(arg) ||
      ts.isTemplateExpression(arg) ||
      ts.isBinaryExpression(arg) ||
      ts.isAsExpression(arg)
    ) {
      dynamic = true
    }
  }

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text
      const receiver = node.expression.expression.getText(sf)
      if (KYSELY_TABLE_METHODS.has(method)) tableArgument(node.arguments[0], method)
      else if (method === 'table' && receiver === 'sql')
        tableArgument(node.arguments[0], 'sql.table')
    }
    if (isStringish(node)) {
      literalNames.push(node)
      const body = node.getText(sf)
      for (const f of scanSqlText(body, tables, isSqlContext(node)))
        add(node.getStart(sf) + f.index, f.table, f.via)
    } else if (ts.isTemplateExpression(node)) {
      const anyCase = isSqlContext(node.head)
      for (const part of [node.head, ...node.templateSpans.map((s) => s.literal)]) {
        for (const f of scanSqlText(part.getText(sf), tables, anyCase))
          add(part.getStart(sf) + f.index, f.table, f.via)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)

  if (dynamic) {
    for (const node of literalNames) {
      if (counted.has(node) || !isStringish(node)) continue
      const table = kyselyTable(node.text)
      if (tables.has(table) && node.text.trim().split(/\s+/).length <= 3)
        add(node.getStart(sf), table, 'table name as a value')
    }
  }
  return [...refs.values()].sort((a, b) => a.line - b.line || a.table.localeCompare(b.table))
}

// ---------------------------------------------------------------------------------------------------------
// Files, owners and the plans

/** The module or platform folder a file of src belongs to (`src/modules/cards/repo.ts` → cards, `src/http/auth.ts` → http); null for the composition root. */
export function ownerOfFile(path: string): string | null {
  const inModule = /^src\/modules\/([^/]+)\//.exec(path)
  if (inModule) return inModule[1]
  if (path.startsWith('src/modules/')) return null
  return /^src\/([^/]+)\//.exec(path)?.[1] ?? null
}

function allowanceCovers(a: Allowance, file: string): boolean {
  return a.files.endsWith('/**') ? file.startsWith(a.files.slice(0, -2)) : file === a.files
}

function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true })
    .map(String)
    .map((f) => relative(ROOT, join(SRC, f)).split('\\').join('/'))
    .filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !NOT_SCANNED.some((p) => f.startsWith(p)),
    )
    .sort()
}

interface Violation {
  file: string
  line: number
  table: string
  owner: string
  via: string
}

/** The references of each file to tables its module does not own, and which plan allowances were needed. */
export function findViolations(
  files: { path: string; text: string }[],
  owners: Record<string, string>,
  plans: readonly Allowance[],
): { violations: Violation[]; used: Set<string> } {
  const tables = new Set(Object.keys(owners))
  const violations: Violation[] = []
  const used = new Set<string>()
  for (const { path, text } of files) {
    const module = ownerOfFile(path)
    for (const ref of scanSource(text, tables, path)) {
      const owner = owners[ref.table]
      if (owner === module) continue
      const plan = plans.find((a) => allowanceCovers(a, path) && a.tables.includes(ref.table))
      if (plan) {
        used.add(`${plan.files} ${ref.table}`)
        continue
      }
      violations.push({ file: path, line: ref.line, table: ref.table, owner, via: ref.via })
    }
  }
  return { violations, used }
}

// ---------------------------------------------------------------------------------------------------------

describe('tables have one owner', () => {
  const tables = migrationTables()

  test('every table the migrations create has exactly one owner, and every owner is a module or a platform folder', () => {
    assert.ok(tables.size > 30, `the migrations were read (${tables.size} tables found)`)
    const unowned = [...tables].filter((t) => !(t in OWNERS)).sort()
    assert.deepEqual(
      unowned,
      [],
      `tables without an owner (add them to OWNERS in test/platform/table-ownership.test.ts): ${unowned.join(', ')}`,
    )
    const stale = Object.keys(OWNERS)
      .filter((t) => !tables.has(t))
      .sort()
    assert.deepEqual(stale, [], `OWNERS names tables no migration creates: ${stale.join(', ')}`)
    for (const [table, owner] of Object.entries(OWNERS)) {
      const folder = [join(SRC, 'modules', owner), join(SRC, owner)].find(
        (d) => existsSync(d) && statSync(d).isDirectory(),
      )
      assert.ok(
        folder && owner !== 'modules',
        `${table}: owner ${owner} is neither a module of src/modules nor a platform folder of src`,
      )
    }
    for (const a of PUBLISHED_PLANS) {
      assert.ok(
        a.reason.length > 0 && a.tables.every((t) => t in OWNERS),
        `plan allowance for ${a.files} names known tables, with a reason`,
      )
      const path = a.files.endsWith('/**') ? a.files.slice(0, -3) : a.files
      assert.ok(
        existsSync(join(ROOT, path)),
        `plan allowance for ${a.files}: no such file or folder`,
      )
    }
  })

  test("SQL names only the tables of its file's module, except through a published plan", () => {
    const files = sourceFiles().map((path) => ({
      path,
      text: readFileSync(join(ROOT, path), 'utf8'),
    }))
    assert.ok(files.length > 100, `the sources were read (${files.length} files)`)
    const { violations, used } = findViolations(files, OWNERS, PUBLISHED_PLANS)
    assert.deepEqual(
      violations.map((v) => `${v.file}:${v.line} names ${v.table} (${v.owner}) via ${v.via}`),
      [],
      "SQL names another module's table: reach that module through its index.ts (or a hook), or make it the owner's published plan",
    )
    const unused = PUBLISHED_PLANS.flatMap((a) => a.tables.map((t) => `${a.files} ${t}`)).filter(
      (k) => !used.has(k),
    )
    assert.deepEqual(
      unused,
      [],
      'plan allowances no reference needs any more: remove them from PUBLISHED_PLANS',
    )
  })

  test('the scanner finds references in Kysely calls, raw SQL, FROM lists and table names passed as values, and skips comments and prose', () => {
    const known = new Set(['accounts', 'programs', 'cards', 'holds', 'events', 'jobs'])
    const source = [
      "db.selectFrom('accounts as a').innerJoin('programs as p', 'p.id', 'a.program_id')", // 1
      "db.selectFrom(['cards', 'holds'])", // 2
      'await sql`SELECT 1 FROM accounts a JOIN programs p ON p.id = a.program_id`', // 3
      'await sql`select 1 from holds h, cards AS c, events WHERE c.id = h.card_id`', // 4
      "await sql`SELECT to_regclass('jobs')::text`", // 5
      '// SELECT * FROM cards: a comment is not code', // 6
      "throw new Error('Moves money from accounts')", // 7: prose, lower case outside SQL
      "client.query('UPDATE jobs SET state = $1')", // 8
      "sql`INSERT INTO ${sql.table('events')} (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = 2`", // 9
      'await sql`SELECT * FROM json_populate_recordset(NULL::cards, ${x})`', // 10
    ].join('\n')
    const refs = scanSource(source, known).map((r) => `${r.line} ${r.table}`)
    assert.deepEqual(refs, [
      '1 accounts',
      '1 programs',
      '2 cards',
      '2 holds',
      '3 accounts',
      '3 programs',
      '4 cards',
      '4 events',
      '4 holds',
      '5 jobs',
      '8 jobs',
      '9 events',
      '10 cards',
    ])

    const lookup =
      "const TABLES = { card_id: 'cards', account_id: 'accounts' }\nawait sql`SELECT organization_id FROM ${sql.table(TABLES[param])}`"
    assert.deepEqual(
      scanSource(lookup, known).map((r) => `${r.line} ${r.table}`),
      ['1 accounts', '1 cards'],
    )
    assert.deepEqual(
      scanSource("const module = 'cards'\nawait sql`SELECT 1`", known),
      [],
      'a string that is a table name is no reference while no table name is passed as a value',
    )
  })

  test("a planted reference to another module's table fails, and a published plan lets it through", () => {
    const owners = { accounts: 'accounts', programs: 'programs', jobs: 'jobs' }
    const planted = [
      {
        path: 'src/modules/accounts/repo.ts',
        text: "db.selectFrom('accounts').selectAll()\nawait sql`SELECT 1 FROM accounts a JOIN programs p ON p.id = a.program_id`",
      },
      { path: 'src/http/auth.ts', text: 'await sql`SELECT 1 FROM jobs`' },
      { path: 'src/jobs/queue.ts', text: "db.insertInto('jobs')" },
    ]
    const { violations } = findViolations(planted, owners, [])
    assert.deepEqual(
      violations.map((v) => `${v.file}:${v.line} ${v.table} (${v.owner})`),
      ['src/modules/accounts/repo.ts:2 programs (programs)', 'src/http/auth.ts:1 jobs (jobs)'],
    )
    const plans = [{ files: 'src/modules/accounts/**', tables: ['programs'], reason: 'test' }]
    const allowed = findViolations(planted, owners, plans)
    assert.deepEqual(
      allowed.violations.map((v) => v.file),
      ['src/http/auth.ts'],
    )
    assert.deepEqual([...allowed.used], ['src/modules/accounts/** programs'])
  })

  test('the table list follows the migrations: created, renamed and dropped tables', () => {
    const found = tablesOfMigrations([
      'CREATE TABLE a (id text)\nCREATE TABLE IF NOT EXISTS b (id text)',
      "await db.schema.createTable('c').execute()\nALTER TABLE a RENAME TO d\nDROP TABLE IF EXISTS b",
    ])
    assert.deepEqual([...found].sort(), ['c', 'd'])
  })
})
