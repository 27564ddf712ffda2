/**
 * For the tests of PostgreSQL's plans (PostgreSQL only): the SQL the app sends captured below its repos (the `pg`
 * client's `query`, so what is explained is exactly what ran), and plans walked as trees.
 */
import pg from 'pg'

/** A statement the app sent, with its parameters. */
export interface Captured {
  text: string
  values: unknown[]
}

/** A node of `EXPLAIN (FORMAT JSON)`, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Rows Removed by Filter'?: number
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
