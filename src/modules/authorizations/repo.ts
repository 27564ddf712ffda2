import { sql, type RawBuilder, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import {
  ANSWER_RECORD_COLUMNS,
  answerItemFields,
  storeAnswersCte,
  type AnswerToStore,
} from '../../http/idempotent-answer.js'
import { applyBounds, whereIs, type PageBounds } from '../../http/pagination.js'
import { lowestIdAt } from '../../lib/ids.js'
import type { AccountRow } from '../accounts/index.js'
import {
  ACTIVITY_WINDOW,
  activityCte,
  activityTrackedSql,
  activityWriteCtes,
  type Buckets,
  type CounterAdd,
  type CounterRead,
  countersCtes,
  countersGuardCtes,
  countersJsonSql,
  countersOf,
  countersWriteCtes,
  type DecisionRule,
  decisionRuleDefsOf,
  decisionRulesOf,
  liveFrom,
  rulesCte,
  rulesExistSql,
  ruleDefsJsonSql,
  rulesJsonSql,
} from '../authorization-rules/index.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import { cardsCte, cardUnchangedSql, clockOfCardSql, type CardRow } from '../cards/index.js'
import { programsCte, type ProgramRow } from '../programs/index.js'
import { EVENT_ROW_COLUMNS, emitPerRow } from '../events/index.js'
import { accountsCte, holdsCtes } from '../ledger/index.js'
import { operationsSucceededCte } from '../../processors/outcome-plan.js'
import type { SandboxPins } from '../../processors/port.js'
import { sandboxPinsSql } from '../../processors/sandbox-fx.js'
import type { WindowInterval } from './decide.js'
import type { AuthorizationRequestValue, AuthorizationsTable } from './types.js'
import './types.js'

export type AuthorizationRow = Selectable<AuthorizationsTable>

/** The card's columns a decision reads. */
const DECISION_CARD = [
  'id',
  'organization_id',
  'environment',
  'program_id',
  'account_id',
  'cardholder_id',
  'status',
  'exp_month',
  'exp_year',
  'spending_controls',
  // Travel mode: the card's copy of its eSIM's country and validity, read in this same statement.
  'travel_country',
  'travel_valid_until',
  'created_at',
] as const
/** The funding account's columns a decision reads. */
const DECISION_ACCOUNT = ['id', 'status', 'currency', 'ledger_balance', 'held_balance'] as const
/** The card's program's columns a decision reads: its processor (the rate's source) and FX settings. */
const DECISION_PROGRAM = ['id', 'processor', 'foreign_spend', 'fx_markup_bps'] as const
export type DecisionCard = Pick<CardRow, (typeof DECISION_CARD)[number]>
export type DecisionAccount = Pick<AccountRow, (typeof DECISION_ACCOUNT)[number]>
export type DecisionProgram = Pick<ProgramRow, (typeof DECISION_PROGRAM)[number]>

/** What a decision reads: the card, its funding account, and the row versions the decision's write is guarded by. */
export interface DecisionFacts {
  card: DecisionCard
  account: DecisionAccount
  /** The card's program (null if it is not attached: only a spend needing conversion then fails). */
  program: DecisionProgram | null
  /** The rows' `xmin`: any committed change to a row gives it a new one. */
  versions: { card: string; account: string }
  /** The enabled authorization rules that apply to the card, in id order. */
  rules: DecisionRule[]
  /**
   * The card's last hour (`authorization_count_1h`, `decline_count_1h`) when a rule reads it (`needed`): its activity
   * row's buckets, or, when it has none yet (`tracked` false), the same counted once from its authorizations.
   */
  activity: { needed: boolean; tracked: boolean; buckets: Buckets | null }
  /**
   * The counters of the card's velocity limits by key, with their rows' versions (a version is null when another
   * statement made the row as this one read: a decision that rests on it is decided again).
   */
  counters: Map<string, CounterRead>
  /** The tenant's pinned sandbox rates into the account's currency (`sandboxPinsSql`): a spend abroad's rate. */
  sandboxPins: SandboxPins | null
  /** The card's tenant has an enabled authorization rule (read without the rules, its rules are still to read). */
  rulesExist: boolean
  /**
   * The sandbox clock of the card's cardholder (docs/sandbox-clocks.md), read only when asked (`clocks`, a sandbox
   * tenant in the batch); null otherwise.
   */
  clockId: string | null
}

/** What every decision reads of its card, account and program, the rules aside. */
const factColumns = [
  ...DECISION_CARD.map((c) => sql`c.${sql.ref(c)} AS ${sql.ref(`card_${c}`)}`),
  ...DECISION_ACCOUNT.map((c) => sql`a.${sql.ref(c)} AS ${sql.ref(`account_${c}`)}`),
  ...DECISION_PROGRAM.map((c) => sql`p.${sql.ref(c)} AS ${sql.ref(`program_${c}`)}`),
  sql`c.version AS card_version`,
  sql`a.version AS account_version`,
  sql`${sandboxPinsSql(sql`c.organization_id`, sql`c.environment`, sql`a.currency`)} AS sandbox_pins`,
  sql`${rulesExistSql(sql`c.organization_id`, sql`c.environment`)} AS rules_exist`,
]
/** With the rules that apply to each card, their counters and the card's activity (`rulesCte` and the rest). */
const decisionColumns = sql.join([
  ...factColumns,
  sql`${rulesJsonSql('r', sql`c.id`)} AS rules`,
  sql`act.needed AS activity_needed`,
  sql`act.tracked AS activity_tracked`,
  sql`${countersJsonSql('vc', sql`c.id`)} AS counters`,
  // The batch's rules themselves once, on its first row (each card's row names its rules by id).
  sql`CASE WHEN row_number() OVER () = 1 THEN ${ruleDefsJsonSql('r')} END AS rule_defs`,
])

/**
 * A card's last hour counted from its authorizations, in the activity row's minute buckets: the seed of a card a rule
 * reading its activity applies to and that has no row yet (read once: from then on its decisions keep the row). The
 * card's history index from the lowest id of the hour's first minute.
 */
function activitySeedSql(
  cardId: RawBuilder<unknown>,
  now: Date,
  clocks: boolean,
): RawBuilder<unknown> {
  const since = new Date(liveFrom(ACTIVITY_WINDOW, now) * 1000)
  // In the sandbox an authorization may be under a clock, its created_at the clock's time and its id wall time.
  const idBound = clocks ? sql`` : sql`AND h.id >= ${lowestIdAt('auth', since)}`
  return sql`(SELECT coalesce(jsonb_object_agg(s.m::text, jsonb_build_array(s.approved, s.declined)), '{}'::jsonb) FROM (
      SELECT (floor(extract(epoch FROM h.created_at) / 60) * 60)::bigint AS m,
        count(*) FILTER (WHERE h.approved) AS approved, count(*) FILTER (WHERE NOT h.approved) AS declined
      FROM authorizations AS h WHERE h.card_id = ${cardId} ${idBound} AND h.created_at >= ${since}
      GROUP BY 1) AS s)`
}

/** The columns of `row` named `prefix` + column, as an object keyed by column. */
function pick<K extends string>(
  row: Record<string, unknown>,
  prefix: string,
  columns: readonly K[],
): Record<K, unknown> {
  const out = {} as Record<K, unknown>
  for (const c of columns) out[c] = row[`${prefix}${c}`]
  return out
}

/**
 * Cards, their funding accounts and their programs' FX settings in one statement, only what a decision needs,
 * by card id (a card not found is absent), through the cards', the ledger's and the programs' published reads. `lock`: the cards are locked
 * against changes and the accounts' rows, in id order, for the rest of the caller's transaction (the
 * pessimistic path); otherwise a plain read whose versions guard the write. `clocks`: each card's sandbox clock is
 * read too, in the same statement (clocks exist only in the sandbox: production never reads it).
 */
export async function readDecisionFacts(
  db: Db,
  cardIds: readonly string[],
  lock: boolean,
  now: Date = new Date(),
  rules = true,
  clocks = false,
): Promise<Map<string, DecisionFacts>> {
  const clock = clocks ? sql`, ${clockOfCardholderSql(sql`c.cardholder_id`)} AS clock_id` : sql``
  const facts = sql`${cardsCte('c', JSON.stringify(cardIds), DECISION_CARD, lock)},
    ${accountsCte('a', sql`SELECT account_id FROM c`, lock)},
    ${programsCte('p', sql`SELECT program_id FROM c`, DECISION_PROGRAM)}`
  // Without the rules (`rules` false: the caller knows of none in the card's tenant), the statement is a third of
  // the size, and planning it, which costs PostgreSQL more than running it, costs a third. `rules_exist` says when
  // the caller must read again with them.
  const { rows } = rules
    ? await sql<Record<string, unknown>>`
    WITH ${facts},
    ${rulesCte('r', 'c')},
    ${activityCte('act', 'c', 'r')},
    ${countersCtes('vc', 'r', 'c', lock ? sql`(SELECT count(*) FROM a) >= 0` : null, now)}
    SELECT ${decisionColumns}${clock},
      CASE WHEN act.needed AND NOT act.tracked THEN ${activitySeedSql(sql`c.id`, now, clocks)} ELSE act.buckets END AS activity_buckets
    FROM c JOIN a ON a.id = c.account_id JOIN act ON act.card_id = c.id
    LEFT JOIN p ON p.id = c.program_id`.execute(db)
    : await sql<Record<string, unknown>>`
    WITH ${facts}
    SELECT ${sql.join(factColumns)}, ${activityTrackedSql(sql`c.id`)} AS activity_tracked${clock}
    FROM c JOIN a ON a.id = c.account_id LEFT JOIN p ON p.id = c.program_id`.execute(db)
  const defs = decisionRuleDefsOf(rows.find((row) => row.rule_defs != null)?.rule_defs)
  return new Map(
    rows.map((row) => [
      row.card_id as string,
      {
        card: pick(row, 'card_', DECISION_CARD) as DecisionCard,
        account: pick(row, 'account_', DECISION_ACCOUNT) as DecisionAccount,
        program:
          row.program_id === null
            ? null
            : (pick(row, 'program_', DECISION_PROGRAM) as DecisionProgram),
        versions: { card: row.card_version as string, account: row.account_version as string },
        rules: decisionRulesOf(row.rules, defs),
        activity: {
          needed: row.activity_needed === true,
          tracked: row.activity_tracked === true,
          buckets: (row.activity_buckets as Buckets | null) ?? null,
        },
        counters: countersOf(row.counters),
        sandboxPins: (row.sandbox_pins as SandboxPins | null) ?? null,
        rulesExist: row.rules_exist as boolean,
        clockId: (row.clock_id as string | null | undefined) ?? null,
      },
    ]),
  )
}

/** The authorization columns a decision's write takes from its view, not from its item (`recordDecisions`). */
const FROM_VIEW = new Set(['rule_results', 'request_history'])

/** One decided authorization to write. */
export interface DecisionWrite {
  row: AuthorizationRow
  /**
   * The authorization in its REST shape (`presentAuthorization(row)`): the object of its `authorization.created`, and
   * where the row's `rule_results` and `request_history` are written from.
   */
  view: unknown
  eventId: string
  /** Approved: the id of its hold's ledger entry (the hold's id is the row's `hold_id`). */
  entryId: string | null
  /** The card and account row versions the decision read. */
  versions: DecisionFacts['versions']
  /** The processor intent of a checked security code, marked succeeded with the write. */
  operationId: string | null
  /** The request's Idempotency-Key: the authorization is its answer, stored with it. */
  answer: AnswerToStore | null
  /**
   * The card's activity row (authorization-rules' `activityWriteCtes`): `track` counts the decision in it (made from
   * `seed` when the card had none), `drop` deletes it (no rule reads it any more); absent, nothing.
   */
  activity?: { mode: 'track' | 'drop'; bucket: number; keepFrom: number; seed: Buckets | null }
  /** The velocity counters (and the versions read) the decision's verdict rested on: changed since, it is not written. */
  guards?: { key: string; version: string | null }[]
  /** What an approval adds to the velocity counters. */
  counts?: CounterAdd[]
  /** The sandbox clock the authorization is under (its `authorization.created` carries it). */
  clockId?: string | null
}

/**
 * Decisions in one statement, committed on its own or in the caller's transaction. The accounts' rows are
 * locked first, in id order (two batches never wait on each other in a circle); an account's decisions are
 * written only while it and each of their cards are still the versions the decisions read, and its approvals'
 * total is still covered (open, available balance). Then, for those accounts: the holds (held balances, hold
 * rows, `hold` entries, an account's in batch order), the authorization rows, the processor outcomes, and
 * `authorization.created` with its deliveries for each, and the stored answer of each sent with an
 * Idempotency-Key. `stale`: accounts whose decisions were not written
 * (something changed since the read): decide them again. `now` is the decisions' time (a sandbox clock's, for a
 * decision under one: its hold and counters), `wall` the service's (the events, stored answers and outcomes).
 */
export async function recordDecisions(
  db: Db,
  writes: readonly DecisionWrite[],
  now: Date,
  wall: Date = now,
): Promise<{ stale: Set<string>; notified: boolean }> {
  if (writes.length === 0) return { stale: new Set(), notified: false }
  // Each item is the authorization row with what its write needs beside it: read as a row (`input`), and as
  // an `authorizations` record for the insert (the extra keys ignored). The row's rule results and request history
  // are not sent: the view holds them (`presentAuthorization`), and the insert takes them from it. Sent twice, the
  // ten rules' results were half of an item, parsed twice by the statement.
  const items = JSON.stringify(
    writes.map(({ row: { rule_results, request_history, ...row }, ...w }, idx) => ({
      ...row,
      idx,
      account_version: w.versions.account,
      card_version: w.versions.card,
      entry_id: w.entryId,
      operation_id: w.operationId,
      event_id: w.eventId,
      view: w.view,
      activity: w.activity?.mode ?? null,
      activity_bucket: w.activity?.bucket ?? null,
      activity_keep_from: w.activity?.keepFrom ?? null,
      activity_seed: w.activity?.seed ?? null,
      guards: w.guards ?? [],
      counts: w.counts ?? [],
      clock_id: w.clockId ?? null,
      ...answerItemFields(w.answer),
    })),
  )
  const columns = Object.keys(writes[0].row)
  // The rules' parts of the statement only when a decision has something for them (most tenants have no rule):
  // a smaller statement costs PostgreSQL less to plan.
  const guarded = writes.some((w) => w.guards?.length)
  const counted = writes.some((w) => w.counts?.length)
  const tracked = writes.some((w) => w.activity)
  const events = emitPerRow('written', EVENT_ROW_COLUMNS, sql`view`, wall)
  const { rows } = await sql<{ stale: string[]; notified: number }>`
    WITH batch AS (SELECT ${items}::json AS items),
    input AS (
      SELECT * FROM json_to_recordset((SELECT items FROM batch)) AS i(idx int, id text, account_id text, card_id text, account_version text,
        card_version text, approved boolean, held_amount bigint, hold_id text, entry_id text, expires_at timestamptz, created_at timestamptz,
        operation_id text, event_id text, organization_id text, environment text, view json,
        activity text, activity_bucket bigint, activity_keep_from bigint, activity_seed jsonb, guards json, counts json, clock_id text,
        ${ANSWER_RECORD_COLUMNS})
    ),
    ${accountsCte('locked', sql`SELECT account_id FROM input`, true)},
    ${guarded ? sql`${countersGuardCtes('input', sql`(SELECT count(*) FROM locked) >= 0`)},` : sql``}
    checked AS MATERIALIZED (
      SELECT i.account_id,
        bool_and(coalesce(l.version = i.account_version AND ${cardUnchangedSql(sql`i.card_id`, sql`i.card_version`)}, false))
        AND coalesce(bool_and(l.status = 'open') FILTER (WHERE i.approved), true)
        AND coalesce(sum(i.held_amount) FILTER (WHERE i.approved) <= min(l.available), true)
        ${guarded ? sql`AND i.account_id NOT IN (SELECT account_id FROM counters_moved)` : sql``} AS fresh
      FROM input AS i LEFT JOIN locked AS l ON l.id = i.account_id
      GROUP BY i.account_id
    ),
    ok AS MATERIALIZED (
      SELECT i.* FROM input AS i JOIN checked AS k ON k.account_id = i.account_id AND k.fresh
    ),
    approvals AS (
      SELECT idx, account_id, held_amount AS amount, hold_id, entry_id, id AS source_id, expires_at, created_at AS at FROM ok WHERE approved
    ),
    ${holdsCtes('approvals', now)},
    auth AS (
      INSERT INTO authorizations (${sql.join(columns.map((c) => sql.ref(c)))})
      SELECT ${sql.join(columns.map((c) => (FROM_VIEW.has(c) ? sql`(o.view->${c})::jsonb` : sql.ref(`r.${c}`))))}
      FROM json_populate_recordset(NULL::authorizations, (SELECT items FROM batch)) AS r JOIN ok AS o ON o.id = r.id
    ),
    ${operationsSucceededCte('outcome', sql`SELECT operation_id FROM ok WHERE operation_id IS NOT NULL`, wall)},
    ${tracked ? sql`${activityWriteCtes('ok', now)},` : sql``}
    ${counted ? sql`${countersWriteCtes('ok', now)},` : sql``}
    ${storeAnswersCte('ok', sql`view`, wall)},
    written AS (
      SELECT event_id, organization_id, environment, 'authorization.created'::text AS event_type, view, clock_id FROM ok
    ),
    ${events.ctes}
    SELECT coalesce((SELECT json_agg(account_id) FROM checked WHERE NOT fresh), '[]'::json) AS stale, ${events.notified} AS notified`.execute(
    db,
  )
  return { stale: new Set(rows[0].stale), notified: Boolean(rows[0].notified) }
}

export async function findAuthorization(db: Db, id: string): Promise<AuthorizationRow | undefined> {
  return db.selectFrom('authorizations').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * `findAuthorization` with the sandbox clock of its card's cardholder (docs/sandbox-clocks.md), read in the same
 * statement; `clocks` false (production, where no clock exists) reads none and answers null.
 */
export async function findAuthorizationWithClock(
  db: Db,
  id: string,
  clocks: boolean,
): Promise<(AuthorizationRow & { clock_id: string | null }) | undefined> {
  if (!clocks) {
    const row = await findAuthorization(db, id)
    return row && { ...row, clock_id: null }
  }
  return db
    .selectFrom('authorizations')
    .selectAll()
    .select(sql<string | null>`${clockOfCardSql(sql.ref('authorizations.card_id'))}`.as('clock_id'))
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Updates amounts and status; `request` (an increment) is appended to the request history. */
export async function updateAuthorization(
  trx: Db,
  id: string,
  patch: Updateable<AuthorizationsTable>,
  request?: AuthorizationRequestValue,
): Promise<AuthorizationRow> {
  let q = trx.updateTable('authorizations').set(patch)
  if (request)
    q = q.set({ request_history: sql`request_history || ${json([request])}::jsonb` as never })
  return q.where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

/**
 * Approved spend of a card in each window since its start: what approved authorizations still hold plus
 * what they captured (reversed and expired parts are not spend). One statement for every window asked.
 */
export async function spendSince(
  db: Db,
  cardId: string,
  windows: { interval: WindowInterval; from: Date | null }[],
  onClock = false,
): Promise<Partial<Record<WindowInterval, number>>> {
  if (windows.length === 0) return {}
  const earliest = windows.some((w) => w.from === null)
    ? null
    : new Date(Math.min(...windows.map((w) => w.from!.getTime())))
  const columns = windows.map((w) =>
    w.from === null
      ? sql`coalesce(sum(held_amount + captured_amount), 0)::bigint AS ${sql.ref(w.interval)}`
      : sql`coalesce(sum(held_amount + captured_amount) FILTER (WHERE created_at >= ${w.from}), 0)::bigint AS ${sql.ref(w.interval)}`,
  )
  // An authorization's id is never earlier than its created_at (newId('auth', now)), so the window's rows
  // are all at or above the lowest id of its start: the bound keeps the scan of `authorizations_card` to them. Not
  // under a sandbox clock (`onClock`): there created_at is the clock's time and ids stay on wall time.
  const idBound = earliest && !onClock ? sql`AND id >= ${lowestIdAt('auth', earliest)}` : sql``
  const { rows } = await sql<Record<WindowInterval, number>>`
    SELECT ${sql.join(columns)} FROM authorizations
    WHERE card_id = ${cardId} AND approved
    ${earliest ? sql`${idBound} AND created_at >= ${earliest}` : sql``}`.execute(db)
  const out: Partial<Record<WindowInterval, number>> = {}
  for (const w of windows) out[w.interval] = Number(rows[0]?.[w.interval] ?? 0)
  return out
}

export interface AuthorizationFilter {
  organizationId: string
  environment: string
  cardId?: string
  accountId?: string
  status?: string
}

/** A page of the caller's authorizations, newest first (ids sort by creation time). */
export async function listAuthorizations(
  db: Db,
  filter: AuthorizationFilter,
  bounds: PageBounds,
): Promise<AuthorizationRow[]> {
  let q = db
    .selectFrom('authorizations')
    .selectAll()
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  if (filter.cardId !== undefined) q = q.where('card_id', '=', filter.cardId)
  if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId)
  if (filter.status !== undefined) q = whereIs(q, 'status', filter.status)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** What `ruleDecisions` looks for: one rule's declines and would-be declines in a scope's recent authorizations. */
export interface RuleDecisionsFilter {
  organizationId: string
  environment: string
  ruleId: string
  /** Nothing before this (the rule's creation: no earlier decision can name it). */
  since: Date
  /** How many of the scope's latest authorizations are looked at, at most. */
  scan: number
  limit: number
}

/**
 * The latest authorizations, newest first, whose latest request rule `ruleId` declined (`declined`) or would have
 * declined (`would_decline`, a shadow rule), as `rule_results` records it. No index holds rule results, so only the
 * scope's `scan` latest authorizations since `since` are looked at: a bounded stretch of the list index.
 */
export async function ruleDecisions(db: Db, f: RuleDecisionsFilter): Promise<AuthorizationRow[]> {
  const declined = json([{ rule_id: f.ruleId, outcome: 'declined' }])
  const wouldDecline = json([{ rule_id: f.ruleId, outcome: 'would_decline' }])
  const { rows } = await sql<AuthorizationRow>`
    SELECT * FROM (
      SELECT * FROM authorizations
      WHERE organization_id = ${f.organizationId} AND environment = ${f.environment}
        AND id >= ${lowestIdAt('auth', f.since)}
      ORDER BY id DESC LIMIT ${f.scan}
    ) recent
    WHERE rule_results @> ${declined}::jsonb OR rule_results @> ${wouldDecline}::jsonb
    ORDER BY id DESC LIMIT ${f.limit}`.execute(db)
  return rows
}

/** Pending authorizations whose hold has run out, oldest first: the expiry sweep's worklist. */
export async function dueForExpiry(
  db: Db,
  now: Date,
  limit: number,
): Promise<{ id: string; account_id: string }[]> {
  return (
    db
      .selectFrom('authorizations')
      .select(['id', 'account_id'])
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      // Under a sandbox clock, a hold expires when its clock is advanced past it, not on wall time.
      .where(sql<boolean>`${clockOfCardSql(sql.ref('authorizations.card_id'))} IS NULL`)
      .orderBy('expires_at')
      .limit(limit)
      .execute()
  )
}

/**
 * Pending authorizations of these cards (a sandbox clock's: docs/sandbox-clocks.md) whose `expires_at` is at or
 * before `until`, earliest first.
 */
export async function dueForExpiryOfCards(
  db: Db,
  cardIds: readonly string[],
  until: Date,
  limit: number,
): Promise<{ id: string; account_id: string; expires_at: Date }[]> {
  if (cardIds.length === 0) return []
  const rows = await db
    .selectFrom('authorizations')
    .select(['id', 'account_id', 'expires_at'])
    .where('card_id', 'in', [...cardIds])
    .where('status', '=', 'pending')
    .where('expires_at', '<=', until)
    .orderBy('expires_at')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ ...r, expires_at: new Date(r.expires_at!) }))
}
