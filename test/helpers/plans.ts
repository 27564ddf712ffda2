/**
 * For the tests of PostgreSQL's plans (PostgreSQL only): the SQL the app sends captured below its repos (the `pg`
 * client's `query`, so what is explained is exactly what ran), and plans walked as trees.
 */
import { after, before } from 'node:test'
import pg from 'pg'
import { startTestApp, type TestApp, type TestAppOptions } from './app.js'

/** A statement the app sent, with its parameters. */
export interface Captured {
  text: string
  values: unknown[]
}

/** A node of `EXPLAIN (FORMAT JSON)`, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Rows Removed by Filter'?: number
  'Rows Removed by Index Recheck'?: number
  Plans?: PlanNode[]
}

/** A plan's nodes, the root first. */
export const flatten = (node: PlanNode): PlanNode[] => [
  node,
  ...(node.Plans ?? []).flatMap(flatten),
]

const originalQuery = pg.Client.prototype.query
let capturing = false
const captured: Captured[] = []

/** Wraps the `pg` client's `query` (before the app opens its pool); `restoreQueries` undoes it. */
export function installQueryCapture(): void {
  pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
    // The app names its statements (src/db/client.ts): a query config object { name, text, values }.
    const [first, second] = args
    const text = typeof first === 'string' ? first : first?.text
    const values = typeof first === 'string' ? second : first?.values
    if (capturing && typeof text === 'string')
      captured.push({ text, values: Array.isArray(values) ? values : [] })
    return (originalQuery as any).apply(this, args)
  } as typeof pg.Client.prototype.query
}

export function restoreQueries(): void {
  pg.Client.prototype.query = originalQuery
}

/** The statements the app sent while `work` ran that match `pattern`. */
export async function captureWhile(
  work: () => Promise<unknown>,
  pattern: RegExp,
): Promise<Captured[]> {
  captured.length = 0
  capturing = true
  try {
    await work()
  } finally {
    capturing = false
  }
  return captured.filter((q) => pattern.test(q.text))
}

/** A captured statement's parameters as the SQL literals of `EXECUTE name(…)`. */
export function executeArgs(admin: pg.Client, values: readonly unknown[]): string {
  return values
    .map((v) => {
      if (v === null) return 'NULL'
      if (v instanceof Date) return admin.escapeLiteral(v.toISOString())
      if (Array.isArray(v))
        return admin.escapeLiteral(
          `{${v.map((x) => `"${String(x).replace(/["\\]/g, '\\$&')}"`).join(',')}}`,
        )
      return admin.escapeLiteral(String(v))
    })
    .join(', ')
}

/**
 * A plan test file's app (unless `skip`): the capture installed before the app opens its pool, the app started, and
 * a client of its database to explain with; `ready` gets both and may prepare more. Undone after the file's tests.
 */
export function withCapturingApp(
  skip: string | false,
  ready: (fixture: { t: TestApp; admin: pg.Client }) => unknown,
  options: { app?: TestAppOptions; timeout?: number } = {},
): void {
  let t: TestApp | undefined
  let admin: pg.Client | undefined
  before(
    async () => {
      if (skip) return
      installQueryCapture()
      t = await startTestApp(options.app)
      admin = new pg.Client({ connectionString: t.deps.config.databaseUrl! })
      await admin.connect()
      await ready({ t, admin })
    },
    { timeout: options.timeout },
  )
  after(async () => {
    if (skip) return
    restoreQueries()
    await admin?.end()
    await t?.close()
  })
}

const planOf = (rows: Record<string, unknown>[]) =>
  (rows[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan

/**
 * The plan a named statement settles on after its first executions (the app names its statements: a generic plan,
 * costed for an average value, when PostgreSQL finds it no costlier than the plans for the values seen), run under
 * `EXPLAIN ANALYZE` after six runs, all in a transaction rolled back.
 */
export async function settledPlan(admin: pg.Client, q: Captured): Promise<PlanNode> {
  const args = executeArgs(admin, q.values)
  await admin.query('BEGIN')
  try {
    await admin.query(`PREPARE settled_plan AS ${q.text}`)
    for (let i = 0; i < 6; i++) await admin.query(`EXECUTE settled_plan(${args})`)
    return planOf(
      (await admin.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE settled_plan(${args})`)).rows,
    )
  } finally {
    await admin.query('ROLLBACK')
    await admin.query('DEALLOCATE ALL')
  }
}

/**
 * A statement's generic plan (`plan_cache_mode = force_generic_plan`), shown without running it: for a statement
 * that may not run again (what it writes, an event's id for one, is written already).
 */
export async function genericPlan(admin: pg.Client, q: Captured): Promise<PlanNode> {
  const args = executeArgs(admin, q.values)
  await admin.query('SET plan_cache_mode = force_generic_plan')
  try {
    await admin.query(`PREPARE generic_plan AS ${q.text}`)
    return planOf((await admin.query(`EXPLAIN (FORMAT JSON) EXECUTE generic_plan(${args})`)).rows)
  } finally {
    await admin.query('DEALLOCATE ALL')
    await admin.query('RESET plan_cache_mode')
  }
}

/**
 * `count` copies of the row of `table` whose `key` is `templateId`, each with the columns of `overrides` (SQL over
 * g = 1…count), written straight in SQL.
 */
export async function copyRows(
  admin: pg.Client,
  table: string,
  templateId: string,
  count: number,
  overrides: Record<string, string>,
  key = 'id',
): Promise<void> {
  const { rows } = await admin.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  )
  const columns = rows.map((r) => `"${r.name}"`).join(', ')
  const values = rows
    .map((r) => (r.name in overrides ? overrides[r.name] : `t."${r.name}"`))
    .join(', ')
  await admin.query(
    `INSERT INTO ${table} (${columns}) SELECT ${values} FROM ${table} AS t,
      generate_series(1, ${count}) AS g WHERE t.${key} = $1`,
    [templateId],
  )
}
