import { Type, type Static } from 'typebox'
import { sql, type SelectQueryBuilder } from 'kysely'
import { deriveKey, hmacSha256, safeEqual } from '../lib/crypto.js'
import { PLAN_PER_CALL } from '../db/client.js'
import type { Db } from '../db/types.js'
import type { Clock } from '../lib/clock.js'
import type { RequestCtx } from './context.js'
import { ApiError } from './errors.js'

export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000

/** Query parameters every list accepts. */
export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 25,
      description: 'Page size, 1–100 (default 25).',
    }),
  ),
  starting_after: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'Cursor: the page after it (next_cursor of the previous page).',
    }),
  ),
  ending_before: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'Cursor: the page before it. Not together with starting_after.',
    }),
  ),
}

export interface PageParams {
  limit?: number
  starting_after?: string
  ending_before?: string
}

export const ListEnvelope = <T extends Parameters<typeof Type.Array>[0]>(item: T, name: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      url: Type.String(),
      data: Type.Array(item),
      has_more: Type.Boolean(),
      next_cursor: Type.Union([Type.String(), Type.Null()]),
    },
    { $id: undefined, title: `${name}List` },
  )

export interface ListResult<T> {
  object: 'list'
  url: string
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/** Where a page starts: after (older than) or before (newer than) a position, in the list's sort order. */
export interface PageBounds {
  /** Sort key of the cursor position, or undefined for the first page. */
  after?: string
  before?: string
  /** Rows to fetch: one more than the page size, to know whether more exist. */
  take: number
  /** The direction rows are fetched in; `ending_before` fetches in reverse and flips the page back. */
  reverse: boolean
}

/** `k`: the sort key of the position; `t`: issue time (s); `b`: set on a backward page's next_cursor, which continues backwards. */
interface CursorBody {
  k: string
  t: number
  b?: 1
}

/** A decoded cursor: where it points, and whether it continues a walk backwards (`ending_before`). */
export interface CursorPosition {
  key: string
  backward: boolean
}

/** Signs and checks opaque cursors: bound to the organization, environment and list path; valid 24 hours. */
export class Cursors {
  private readonly key: Buffer
  constructor(
    masterKey: Buffer,
    private readonly clock: Clock,
  ) {
    this.key = deriveKey(masterKey, 'cursor')
  }

  private mac(scope: string, payload: string): string {
    return hmacSha256(this.key, `${scope}|${payload}`).subarray(0, 16).toString('base64url')
  }

  encode(scope: string, sortKey: string, backward = false): string {
    const body: CursorBody = {
      k: sortKey,
      t: Math.floor(this.clock.now().getTime() / 1000),
      ...(backward ? { b: 1 as const } : {}),
    }
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url')
    return `${payload}.${this.mac(scope, payload)}`
  }

  decode(scope: string, cursor: string, param: string): CursorPosition {
    const [payload, mac, extra] = cursor.split('.')
    if (!payload || !mac || extra !== undefined || !safeEqual(mac, this.mac(scope, payload))) {
      // Stripe-style clients pass the last object's id; this API's cursors are opaque: say which value to pass.
      const looksLikeId = /^[a-z]+_[0-9A-Za-z]+$/.test(cursor)
      throw new ApiError('invalid_parameter', {
        param,
        message: looksLikeId
          ? `${param} takes a cursor, not an object id: pass the next_cursor of the previous page (${param}=<next_cursor>).`
          : `Invalid ${param}: not a cursor issued for this list; pass the next_cursor of a page of this same list.`,
      })
    }
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorBody
    if (this.clock.now().getTime() - body.t * 1000 > CURSOR_TTL_MS)
      throw new ApiError('expired_cursor', { param })
    return { key: body.k, backward: body.b === 1 }
  }
}

/**
 * Runs one page of a list whose rows sort by a unique text key (ids are time-sortable).
 * `order: 'desc'` lists newest first. `fetch` receives the bounds and applies them with `applyBounds`.
 */
export async function paginate<Row, Out>(options: {
  ctx: RequestCtx
  cursors: Cursors
  url: string
  page: PageParams
  sortKey: (row: Row) => string
  fetch: (bounds: PageBounds) => Promise<Row[]>
  present: (row: Row) => Out | Promise<Out>
}): Promise<ListResult<Out>> {
  const { page, cursors } = options
  if (page.starting_after !== undefined && page.ending_before !== undefined) {
    throw new ApiError('invalid_parameter', {
      param: 'ending_before',
      message: 'starting_after and ending_before cannot be used together.',
    })
  }
  const limit = page.limit ?? 25
  const scope = `${options.ctx.organizationId}|${options.ctx.environment}|${options.url}`
  const bounds: PageBounds = { take: limit + 1, reverse: false }
  // A next_cursor always continues the walk it came from when passed as starting_after, as the envelope says:
  // the one of a backward page (ending_before) carries its direction and goes on backwards.
  const position =
    page.starting_after !== undefined
      ? cursors.decode(scope, page.starting_after, 'starting_after')
      : page.ending_before !== undefined
        ? { ...cursors.decode(scope, page.ending_before, 'ending_before'), backward: true }
        : null
  if (position?.backward) {
    bounds.before = position.key
    bounds.reverse = true
  } else if (position) {
    bounds.after = position.key
  }
  let rows = await options.fetch(bounds)
  const hasMore = rows.length > limit
  rows = rows.slice(0, limit)
  if (bounds.reverse) rows.reverse()
  const data = await Promise.all(rows.map(options.present))
  // Going backwards, the continuation is before the first row; forwards, after the last one.
  const edge = bounds.reverse ? rows[0] : rows[rows.length - 1]
  return {
    object: 'list',
    url: options.url,
    data,
    has_more: hasMore,
    next_cursor:
      hasMore && edge !== undefined
        ? cursors.encode(scope, options.sortKey(edge), bounds.reverse)
        : null,
  }
}

/** Whose cursors the operator API's lists hand out: the platform's own, not any organization's. */
export const OPERATOR_CTX: RequestCtx = {
  requestId: 'operator',
  organizationId: 'operator',
  environment: 'sandbox',
  clientId: 'operator',
  scopes: new Set(),
}

/** Applies page bounds to a query on `column`; `order` is the list's natural order. */
export function applyBounds<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  bounds: PageBounds,
  column: string,
  order: 'asc' | 'desc',
): QB {
  const ref = sql.ref(column)
  // In natural order "after" means further along: smaller keys for desc lists, larger for asc.
  const forwardOp = order === 'desc' ? '<' : '>'
  const backwardOp = order === 'desc' ? '>' : '<'
  let q = qb as SelectQueryBuilder<any, any, any>
  if (bounds.after !== undefined) q = q.where(ref, forwardOp, bounds.after)
  if (bounds.before !== undefined) q = q.where(ref, backwardOp, bounds.before)
  const direction = bounds.reverse ? (order === 'desc' ? 'asc' : 'desc') : order
  return q.orderBy(ref, direction).limit(bounds.take) as QB
}

/**
 * One page of the rows any of `branches` selects, in the list's order: each branch is bounded and limited on its
 * own, then the branches are merged (PostgreSQL's Merge Append), so each reads its own index range in `column`
 * order and at most a page of it. The shape for a filter that is several index ranges (a status that stands for
 * two stored ones, an event type prefix, one column of a two-column index): an `IN` list or an `OR` would read every
 * matching row and sort them, or walk the scope past every row it rejects. One branch is `applyBounds` itself.
 */
export async function mergedPage<Row>(
  db: Db,
  branches: SelectQueryBuilder<any, any, Row>[],
  bounds: PageBounds,
  column: string,
  order: 'asc' | 'desc',
): Promise<Row[]> {
  if (branches.length === 0) return []
  if (branches.length === 1) return applyBounds(branches[0], bounds, column, order).execute()
  const pages = branches.map((b) => applyBounds(b, bounds, column, order))
  const direction = bounds.reverse ? (order === 'desc' ? 'asc' : 'desc') : order
  const merged = db
    .selectFrom(sql`(${sql.join(pages, sql` UNION ALL `)})`.as('page'))
    .selectAll()
    .orderBy(sql.ref(column.slice(column.lastIndexOf('.') + 1)), direction)
    .limit(bounds.take)
  return (await merged.execute()) as Row[]
}

/**
 * `base` narrowed to every combination of the values listed per column: the branches of `mergedPage` that read an
 * index on those columns. A column the caller filters lists its one value; a column left open lists its closed set
 * of values, so `(scope, type, status, id)` answers `type` alone as one range per status.
 */
export function branchesOver<QB extends SelectQueryBuilder<any, any, any>>(
  base: QB,
  columns: Record<string, readonly string[]>,
): QB[] {
  let branches = [base]
  for (const [column, values] of Object.entries(columns)) {
    branches = branches.flatMap((q) => values.map((value) => whereIs(q, column, value)))
  }
  return branches
}

/**
 * A page of `base` filtered on columns of closed sets that one `(scope, columns…, id)` index holds: with no column
 * filtered, one range of the scope index; otherwise one range per combination of the filtered values and every value
 * of the columns left open (`branchesOver`), merged in list order (`mergedPage`).
 */
export function closedSetPage<Row>(
  db: Db,
  base: SelectQueryBuilder<any, any, Row>,
  bounds: PageBounds,
  columns: Record<string, { value: string | undefined; all: readonly string[] }>,
): Promise<Row[]> {
  const entries = Object.entries(columns)
  if (entries.every(([, c]) => c.value === undefined))
    return applyBounds(base, bounds, 'id', 'desc').execute()
  return mergedPage(
    db,
    branchesOver(
      base,
      Object.fromEntries(
        entries.map(([name, c]) => [name, c.value !== undefined ? [c.value] : c.all]),
      ),
    ),
    bounds,
    'id',
    'desc',
  )
}

/**
 * `column = value` for a value of a closed set (a status, a type, a wallet), written into the statement instead of
 * bound. The app names its statements (src/db/client.ts), and PostgreSQL may settle on one plan for a named
 * statement whatever its parameters, costed with an average value's frequency: a rare status then walks the scope
 * index. Written in, each value is planned for its own frequency, and a partial index whose predicate names it
 * (`WHERE status = 'pending'`) applies. Only for values the schema already restricted to a short list.
 */
export function whereIs<QB extends SelectQueryBuilder<any, any, any>>(
  q: QB,
  column: string,
  value: string,
): QB {
  return q.where(sql.ref(column), '=', sql.lit(value)) as QB
}

/**
 * The rows whose `column` is `value`, ordered as a `(scope…, column, id DESC)` index holds them: by the column, then
 * by the list's key (`applyBounds` adds it), for a filter whose value can be frequent in a table's history and absent
 * from its newest rows (an event type). Written as `column = value` (`whereIs`), the column would drop out of the
 * order (PostgreSQL leaves a column equal to a constant out of a sort), and the primary key read backwards would
 * answer `id DESC` too, filtering each row on the column: the planner takes that road for a value its statistics call
 * frequent, and for a value absent from the newest rows it walks every newer row first (on a year's events,
 * `?type=card.created` ran at a quarter of the empty database's rate). As the range `column >= value AND column <=
 * value` it is the same rows, the column stays in the order, and only the index answers it without a sort; the range
 * still positions the scan (after a `>=` or `<=` start key, the next column's key, the cursor, positions it too). The
 * value is written in (`whereIs`'s reason); the column's order follows the page's direction, as the index is read
 * forwards or backwards. The statement is planned per call (`PLAN_PER_CALL`): a generic plan, costed without the
 * cursor's value, takes the key range between the cursor and the oldest retained row for a few rows and sorts it,
 * reading every row of other values in it; planned with the values, it reads the index, or sorts a range that is
 * truly short. Not for a column of a partial index's predicate (`status = 'pending'`), which a range does not prove.
 */
function inIndexOrder<QB extends SelectQueryBuilder<any, any, any>>(
  q: QB,
  column: string,
  value: string,
  bounds: PageBounds,
): QB {
  return q
    .where(sql.ref(column), '>=', sql.lit(value))
    .where(sql.ref(column), '<=', sql.lit(value))
    .orderBy(sql.ref(column), bounds.reverse ? 'desc' : 'asc')
    .modifyEnd(sql.raw(PLAN_PER_CALL)) as QB
}

/**
 * A page of `base` whose `column` is one of `values`, each value's range read in its index's order (`inIndexOrder`)
 * and the pages merged (`mergedPage`); with `values` undefined, a page of `base` itself.
 */
export function inIndexOrderPage<Row>(
  db: Db,
  base: SelectQueryBuilder<any, any, Row>,
  column: string,
  values: readonly string[] | undefined,
  bounds: PageBounds,
): Promise<Row[]> {
  return mergedPage(
    db,
    values === undefined
      ? [base]
      : values.map((value) => inIndexOrder(base, column, value, bounds)),
    bounds,
    'id',
    'desc',
  )
}

/** `column IN (values)` for values of a closed set, written in (`whereIs`). */
export function whereIn<QB extends SelectQueryBuilder<any, any, any>>(
  q: QB,
  column: string,
  values: readonly string[],
): QB {
  return q.where(
    sql.ref(column),
    'in',
    values.map((v) => sql.lit(v)),
  ) as QB
}

export type PageQueryType = Static<ReturnType<typeof Type.Object<typeof PageQuery>>>
