import { sql, type RawBuilder } from 'kysely'
import type { Buckets } from './buckets.js'
import type { CounterRead } from './counters.js'
import type { EvaluableRule } from './evaluate.js'
import type { RuleParameters } from './rule.js'

/**
 * What the authorization-rules module publishes for the statements of the authorization decision (which must read and
 * write in one statement each, `authorizations/repo.ts`): SQL fragments naming this module's tables, spliced into the
 * caller's statement. The rules that apply to each card are read beside the card; a card's recent activity with them.
 */

/** The attributes whose values come from a card's activity row. */
const ACTIVITY_ATTRIBUTES = ['authorization_count_1h', 'decline_count_1h'] as const

/**
 * Common table expressions ending in `name`: the enabled, live rules that apply to each card of the caller's CTE `cards`
 * (which has `id`, `organization_id`, `environment`, `program_id`, `account_id`, `cardholder_id`), one row per card and
 * rule: the rules that name the card's program, account, cardholder or the card itself and exclude none of them, read
 * from `authorization_rule_targets` by the card's four ids (one probe of its primary key each: an id names only rules
 * of its own level, as a scope's ids are of its level, and a program is never excluded). `reads_activity`: a condition
 * rule reading `authorization_count_1h` or `decline_count_1h`. Each rule is read once for the batch (`<name>_defs`, by
 * its primary key), however many of the batch's cards it applies to.
 */
export function rulesCte(name: string, cards: string): RawBuilder<unknown> {
  const reads = ACTIVITY_ATTRIBUTES.map(
    (attribute) => sql`r.parameters @> ${JSON.stringify({ conditions: [{ attribute }] })}::jsonb`,
  )
  // The cards' matches first, on their own: joined in one query with the rules, the planner (which takes a card's
  // targets for one row) would probe the targets once per card and rule of the tenant instead of once per card.
  const matched = sql.id(`${name}_matched`)
  const defs = sql.id(`${name}_defs`)
  // Each distinct rule by its primary key (a lateral probe, kept one by `OFFSET 0`: pulled up into a join, the generic
  // plan read every rule of the tenant along its scope index and kept the batch's).
  return sql`${matched} AS MATERIALIZED (
      SELECT c.id AS card_id, c.organization_id, c.environment, t.rule_id
      FROM ${sql.table(cards)} AS c
      JOIN authorization_rule_targets AS t ON t.target_id IN (c.program_id, c.account_id, c.cardholder_id, c.id)
      GROUP BY c.id, c.organization_id, c.environment, t.rule_id HAVING NOT bool_or(t.excluded)
    ),
    ${defs} AS MATERIALIZED (
      SELECT r.id, r.organization_id, r.environment, r.type, r.mode, r.parameters,
        r.counter_generation AS generation, (r.type = 'condition' AND (${sql.join(reads, sql` OR `)})) AS reads_activity
      FROM (SELECT DISTINCT rule_id FROM ${matched}) AS d
      JOIN LATERAL (SELECT * FROM authorization_rules AS x WHERE x.id = d.rule_id
        AND x.deleted_at IS NULL AND x.status = 'enabled' OFFSET 0) AS r ON true
    ),
    ${sql.id(name)} AS MATERIALIZED (
      SELECT m.card_id, r.id, r.type, r.parameters, r.generation, r.reads_activity
      FROM ${matched} AS m JOIN ${defs} AS r ON r.id = m.rule_id
        AND r.organization_id = m.organization_id AND r.environment = m.environment
    ),
    ${sql.id(`${name}_by_card`)} AS MATERIALIZED (
      SELECT card_id, json_agg(id ORDER BY id) AS ids, bool_or(reads_activity) AS reads_activity
      FROM ${sql.id(name)} GROUP BY card_id
    )`
}

/**
 * Whether the tenant has any enabled rule (one probe of `authorization_rules_scope`): the decision of a tenant
 * without rules reads none of this module's CTEs, and this tells it when that changes.
 */
export function rulesExistSql(
  organizationId: RawBuilder<unknown>,
  environment: RawBuilder<unknown>,
): RawBuilder<boolean> {
  // A scalar subquery with LIMIT, not EXISTS: the planner may run an EXISTS once for all rows (a hashed subplan over
  // every live rule of every tenant); this is a probe of the tenant's rules per card, stopping at the first.
  return sql`coalesce((SELECT true FROM authorization_rules AS x
      WHERE x.organization_id = ${organizationId} AND x.environment = ${environment}
      AND x.deleted_at IS NULL AND x.status = 'enabled' LIMIT 1), false)`
}

/**
 * Whether the card `cardId` has an activity row (read without the rules: a row left from a rule since deleted is
 * dropped by the card's next decision, as `activityCte` would have it).
 */
export function activityTrackedSql(cardId: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql`coalesce((SELECT true FROM authorization_rule_activity AS y WHERE y.card_id = ${cardId} LIMIT 1), false)`
}

/** The ids of the rules of `rulesCte` `rules` that apply to the card `cardId` (an expression of the caller's row), in id order. */
export function rulesJsonSql(rules: string, cardId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`coalesce((SELECT b.ids FROM ${sql.table(`${rules}_by_card`)} AS b WHERE b.card_id = ${cardId}), '[]'::json)`
}

/**
 * The rules of `rulesCte` `rules` themselves, each once, as a JSON array: the caller sends it on one row of its result
 * (a rule applying to every card of a batch is sent and parsed once, not once a card).
 */
export function ruleDefsJsonSql(rules: string): RawBuilder<unknown> {
  return sql`(SELECT coalesce(json_agg(json_build_array(r.id, r.type, r.mode, r.parameters, r.reads_activity, r.generation)), '[]'::json)
      FROM ${sql.table(`${rules}_defs`)} AS r)`
}

/** A rule as the decision evaluates it, with what its statement needs to know of it. */
export type DecisionRule = EvaluableRule & {
  /** A condition reading the card's activity (`authorization_count_1h`, `decline_count_1h`). */
  readsActivity: boolean
  /** A velocity limit's counting generation (its counters' keys). */
  generation: number
}

/** The rules of `ruleDefsJsonSql` as read, by id. */
export function decisionRuleDefsOf(value: unknown): Map<string, DecisionRule> {
  const rows = (value ?? []) as [
    string,
    RuleParameters['type'],
    'active' | 'shadow',
    unknown,
    boolean,
    number,
  ][]
  return new Map(
    rows.map(([id, type, mode, parameters, readsActivity, generation]) => [
      id,
      { id, type, mode, parameters, readsActivity, generation } as DecisionRule,
    ]),
  )
}

/** The rules of a card as read (`rulesJsonSql`), from the batch's (`decisionRuleDefsOf`). */
export function decisionRulesOf(
  ids: unknown,
  defs: ReadonlyMap<string, DecisionRule>,
): DecisionRule[] {
  return ((ids ?? []) as string[]).map((id) => {
    const rule = defs.get(id)
    if (!rule) throw new Error(`rule ${id} applies to a card but was not read`)
    return rule
  })
}

/** The counter key of a velocity limit of `rules` (alias `r`) for the card `c` of the caller's statement (counters.ts). */
const counterKeySql = sql`r.id || ':' || r.generation || ':' || CASE r.parameters->>'aggregate'
  WHEN 'card' THEN c.id WHEN 'account' THEN c.account_id ELSE c.cardholder_id END`

/** How long a counter made and never counted in is kept (the purge's cut-off for it). */
export const COUNTER_UNUSED_MS = 24 * 60 * 60 * 1000

/**
 * The counters of the velocity limits of `rules` (a `rulesCte` over the caller's `cards`), as common table expressions
 * named `name` (`card_id`, `key`, `buckets`, `version`: the row's `xmin`, `guarded`), then `<name>_by_card` (each card's
 * as the JSON `countersJsonSql` reads). Only a cardholder's counter is
 * guarded (`guarded`: the write compares its version, [Counters](docs/authorization-rules.md#counters)); a card's or an
 * account's changes only with its account's row, whose version the write compares already. A guarded counter no row
 * holds yet is made here, empty, so that the write can lock it (a row is made once per rule and cardholder, never per
 * window); one another statement made meanwhile, which this statement cannot see, has no version in `name`, and a
 * decision that read it is decided again. The others are made by the write that first counts in them. `lock`: the rows
 * are locked for the caller's transaction, in key order, once `lock` (a condition that reads every account lock of the
 * statement) holds: every statement locks accounts first, then counters, so none waits on another in a circle.
 */
export function countersCtes(
  name: string,
  rules: string,
  cards: string,
  lock: RawBuilder<unknown> | null,
  now: Date,
): RawBuilder<unknown> {
  const keys = sql.id(`${name}_keys`)
  const found = sql.id(`${name}_found`)
  const made = sql.id(`${name}_made`)
  // Each card's counters as the JSON its row carries, grouped once (`countersJsonSql`).
  const byCard = sql`${sql.id(`${name}_by_card`)} AS MATERIALIZED (
      SELECT card_id, json_agg(json_build_array(key, buckets, version, guarded)) AS counters
      FROM ${sql.id(name)} GROUP BY card_id
    )`
  const keysCte = sql`${keys} AS MATERIALIZED (
      SELECT DISTINCT c.id AS card_id, r.id AS rule_id, ${counterKeySql} AS key,
        r.parameters->>'aggregate' = 'cardholder' AS guarded
      FROM ${sql.table(rules)} AS r JOIN ${sql.table(cards)} AS c ON c.id = r.card_id
      WHERE r.type = 'velocity_limit'
    )`
  const insert = (
    from: RawBuilder<unknown>,
  ) => sql`INSERT INTO authorization_rule_counters (key, rule_id, buckets, expires_at, updated_at)
      SELECT DISTINCT ON (key) key, rule_id, '{}'::jsonb,
        ${new Date(now.getTime() + COUNTER_UNUSED_MS)}::timestamptz, ${now}::timestamptz
      FROM ${from} ORDER BY key
      ON CONFLICT (key) DO NOTHING
      RETURNING key, buckets, xmin::text AS version`
  if (!lock)
    // Each key probes the primary key beside its card (`version` null: no row yet); the rows made are joined back to
    // the few keys that had none (a join of the keys with the rows found, as CTEs, would compare every pair).
    return sql`${keysCte},
    ${found} AS MATERIALIZED (
      SELECT k.card_id, k.rule_id, k.key, k.guarded, x.buckets, x.xmin::text AS version
      FROM ${keys} AS k LEFT JOIN authorization_rule_counters AS x ON x.key = k.key
    ),
    ${made} AS (${insert(sql`${found} WHERE version IS NULL AND guarded`)}),
    ${sql.id(name)} AS MATERIALIZED (
      SELECT card_id, key, guarded, buckets, version FROM ${found} WHERE version IS NOT NULL OR NOT guarded
      UNION ALL
      SELECT f.card_id, f.key, f.guarded, m.buckets, m.version
      FROM (SELECT * FROM ${found} WHERE version IS NULL AND guarded) AS f LEFT JOIN ${made} AS m ON m.key = f.key
    ),
    ${byCard}`
  return sql`${keysCte},
    ${found} AS MATERIALIZED (
      SELECT key, buckets, xmin::text AS version FROM authorization_rule_counters
      WHERE key = ANY (ARRAY(SELECT key FROM ${keys})) AND ${lock} ORDER BY key FOR UPDATE
    ),
    ${made} AS (${insert(sql`${keys} WHERE guarded AND key NOT IN (SELECT key FROM ${found})`)}),
    ${sql.id(name)} AS MATERIALIZED (
      SELECT k.card_id, k.key, k.guarded, coalesce(f.buckets, m.buckets) AS buckets,
        coalesce(f.version, m.version) AS version
      FROM ${keys} AS k LEFT JOIN ${found} AS f ON f.key = k.key LEFT JOIN ${made} AS m ON m.key = k.key
    ),
    ${byCard}`
}

/** The counters of `countersCtes` `name` for the card `cardId`, as a JSON array of `[key, buckets, version, guarded]`. */
export function countersJsonSql(name: string, cardId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`coalesce((SELECT b.counters FROM ${sql.table(`${name}_by_card`)} AS b WHERE b.card_id = ${cardId}), '[]'::json)`
}

/** The counters of `countersJsonSql` as read (one no row holds, or another statement made meanwhile, has no version). */
export function countersOf(value: unknown): Map<string, CounterRead> {
  return new Map(
    ((value ?? []) as [string, Buckets | null, string | null, boolean][]).map(
      ([key, buckets, version, guarded]) => [key, { buckets: buckets ?? {}, version, guarded }],
    ),
  )
}

/**
 * The guard of a decision statement over the cardholders' counters its decisions read: `source` is a CTE with
 * `account_id` and `guards` (a JSON array of `{key, version}`: the cardholders' counters whose usage a decision's
 * verdict rested on; a card's or an account's counter is guarded by its account's version). The counters
 * are locked in key order once `after` holds (a condition reading every account lock of the statement);
 * `counters_moved` lists the accounts one of whose decisions read a counter that has changed since (or that it could
 * not read): none of their decisions is written.
 */
export function countersGuardCtes(source: string, after: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`counter_guards AS MATERIALIZED (
      SELECT DISTINCT s.account_id, g.key, g.version
      FROM ${sql.table(source)} AS s, json_to_recordset(s.guards) AS g(key text, version text)
    ),
    counters_locked AS MATERIALIZED (
      SELECT key, xmin::text AS version FROM authorization_rule_counters
      WHERE key = ANY (ARRAY(SELECT key FROM counter_guards)) AND ${after}
      ORDER BY key FOR UPDATE
    ),
    counters_moved AS MATERIALIZED (
      SELECT DISTINCT g.account_id FROM counter_guards AS g LEFT JOIN counters_locked AS l ON l.key = g.key
      WHERE g.version IS NULL OR l.version IS DISTINCT FROM g.version
    )`
}

/**
 * What the written approvals of `source` (a CTE with `approved` and `counts`, a JSON array of `CounterAdd`) add to the
 * counters, one write per counter: each bucket's amount and count added, the buckets older than the window dropped,
 * `expires_at` moved to when the newest counted bucket leaves it (never, for an `all_time` window). A counter's row is
 * updated under its account's lock (a card's or an account's counter: only decisions on that account, all under its
 * lock, change it) or its own (a cardholder's, locked by `countersGuardCtes`); a counter no row holds yet (its first
 * approval, or one purged since it was read: it counted nothing any more) is inserted.
 */
export function countersWriteCtes(source: string, now: Date): RawBuilder<unknown> {
  return sql`counter_adds AS (
      SELECT x.key, x.bucket, sum(x.amount)::bigint AS amount, sum(x.count)::bigint AS count,
        min(x.keep_from) AS keep_from, max(x.expires_at) AS expires_at, bool_or(x.expires_at IS NULL) AS forever
      FROM ${sql.table(source)} AS s,
        json_to_recordset(s.counts) AS x(key text, bucket bigint, amount bigint, count bigint, keep_from bigint, expires_at timestamptz)
      WHERE s.approved GROUP BY x.key, x.bucket
    ),
    counter_deltas AS MATERIALIZED (
      SELECT key, jsonb_object_agg(bucket::text, jsonb_build_array(amount, count)) AS deltas,
        min(keep_from) AS keep_from, CASE WHEN bool_or(forever) THEN NULL ELSE max(expires_at) END AS expires_at
      FROM counter_adds GROUP BY key
    ),
    counters_written AS (
      UPDATE authorization_rule_counters AS rc
      SET buckets = ${addedBucketsSql(sql`rc.buckets`, sql`d.deltas`, sql`d.keep_from`)},
        expires_at = CASE WHEN d.expires_at IS NULL THEN NULL ELSE greatest(rc.expires_at, d.expires_at) END,
        updated_at = ${now}
      FROM counter_deltas AS d WHERE rc.key = d.key AND rc.key = ANY (ARRAY(SELECT key FROM counter_deltas))
      RETURNING rc.key
    ),
    counters_first AS (
      INSERT INTO authorization_rule_counters AS rc (key, rule_id, buckets, expires_at, updated_at)
      SELECT d.key, split_part(d.key, ':', 1), ${addedBucketsSql(sql`'{}'::jsonb`, sql`d.deltas`, null)}, d.expires_at, ${now}
      FROM counter_deltas AS d WHERE d.key NOT IN (SELECT key FROM counters_written) ORDER BY d.key
      ON CONFLICT (key) DO UPDATE SET buckets = ${addedBucketsSql(sql`rc.buckets`, sql`excluded.buckets`, null)},
        expires_at = CASE WHEN excluded.expires_at IS NULL THEN NULL ELSE greatest(rc.expires_at, excluded.expires_at) END,
        updated_at = excluded.updated_at
    )`
}

/**
 * `buckets` (a jsonb expression) with `deltas` (a jsonb object of the same shape, a few buckets) added bucket by bucket,
 * each sum at 0 or above, the buckets before `keepFrom` dropped (null: none): `addToBuckets` (buckets.ts) with `create`,
 * for buckets that are all at 0 or above and deltas none of which is before `keepFrom`. Only the deltas' buckets are
 * computed; the others are copied (`mergedBucketsSql` rebuilds every one).
 */
export function addedBucketsSql(
  buckets: RawBuilder<unknown>,
  deltas: RawBuilder<unknown>,
  keepFrom: RawBuilder<unknown> | null,
): RawBuilder<unknown> {
  const kept =
    keepFrom === null
      ? buckets
      : sql`(${buckets} - ARRAY(SELECT k FROM jsonb_object_keys(${buckets}) AS k WHERE k::bigint < ${keepFrom}))`
  const sum = (i: number) =>
    sql`greatest(coalesce((${buckets}->e.key->>${sql.lit(i)})::bigint, 0) + (e.value->>${sql.lit(i)})::bigint, 0)`
  return sql`(${kept} || coalesce((SELECT jsonb_object_agg(e.key, jsonb_build_array(${sum(0)}, ${sum(1)}))
      FROM jsonb_each(${deltas}) AS e), '{}'::jsonb))`
}

/**
 * A common table expression `name`: each card of `cards` with its activity row, if it has one (`buckets`, `tracked`),
 * and whether a rule of `rules` (a `rulesCte`) reads it (`needed`). A card that needs it and has no row is seeded by
 * the caller from its own authorizations (the caller owns them): `activitySeedWanted`.
 */
export function activityCte(name: string, cards: string, rules: string): RawBuilder<unknown> {
  // A lateral probe of the primary key per card, kept one by `OFFSET 0`: a plain lateral subquery is pulled up into a
  // join, and the generic plan then hashed the whole table (every card's row) for each batch of a few cards.
  return sql`${sql.id(name)} AS MATERIALIZED (
      SELECT c.id AS card_id, x.buckets, x.card_id IS NOT NULL AS tracked,
        coalesce((SELECT b.reads_activity FROM ${sql.table(`${rules}_by_card`)} AS b WHERE b.card_id = c.id), false) AS needed
      FROM ${sql.table(cards)} AS c
      LEFT JOIN LATERAL (SELECT y.card_id, y.buckets FROM authorization_rule_activity AS y
        WHERE y.card_id = c.id OFFSET 0) AS x ON true
    )`
}

/**
 * `buckets` (a jsonb expression) with `deltas` (a jsonb object of the same shape) added bucket by bucket, the buckets
 * before `keepFrom` dropped (null: none), each sum at 0 or above; `create` false adds only to the buckets that are
 * there. The SQL of `addToBuckets` (buckets.ts).
 */
export function mergedBucketsSql(
  buckets: RawBuilder<unknown>,
  deltas: RawBuilder<unknown>,
  keepFrom: RawBuilder<unknown> | null,
  create: boolean,
): RawBuilder<unknown> {
  return sql`(SELECT coalesce(jsonb_object_agg(m.k, jsonb_build_array(greatest(m.a, 0), greatest(m.n, 0))), '{}'::jsonb)
      FROM (
        SELECT u.k, sum(u.a)::bigint AS a, sum(u.n)::bigint AS n FROM (
          SELECT e.key AS k, (e.value->>0)::bigint AS a, (e.value->>1)::bigint AS n FROM jsonb_each(${buckets}) AS e
          UNION ALL
          SELECT d.key, (d.value->>0)::bigint, (d.value->>1)::bigint FROM jsonb_each(${deltas}) AS d
          ${create ? sql`` : sql`WHERE d.key IN (SELECT jsonb_object_keys(${buckets}))`}
        ) AS u ${keepFrom === null ? sql`` : sql`WHERE u.k::bigint >= ${keepFrom}`}
        GROUP BY u.k
      ) AS m)`
}

/**
 * A card's activity row's `updated_at` (the purge's key) when written at `now`: kept while it is at most a minute
 * older, so that the row's index on it is not rewritten by every decision (the update stays a heap-only one). The
 * purge allows for the minute (`purgeActivity`).
 */
function activityTouchedSql(
  updatedAt: RawBuilder<unknown>,
  now: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`CASE WHEN ${updatedAt} BETWEEN ${now} - interval '${sql.raw(String(ACTIVITY_TOUCH_SECONDS))} seconds' AND ${now}
    THEN ${updatedAt} ELSE ${now} END`
}

/** How much older than the last write a card's activity row's `updated_at` may be (`activityTouchedSql`). */
export const ACTIVITY_TOUCH_SECONDS = 60

/**
 * The activity written by a decision statement: `source` is a CTE of its written decisions with `card_id`, `approved`,
 * `activity` (`track`: count it in the card's row, made from `activity_seed` when it has none; `drop`: no rule reads
 * the card's activity any more, its row goes; null: nothing), `activity_bucket` (its minute), `activity_seed` (jsonb)
 * and `activity_keep_from` (the first minute still in the hour). A card's decisions are added in one write.
 */
export function activityWriteCtes(source: string, now: Date): RawBuilder<unknown> {
  const deltas = sql`(SELECT d.deltas FROM activity_deltas AS d WHERE d.card_id = excluded.card_id)`
  return sql`activity_minutes AS (
      SELECT card_id, activity_bucket AS bucket, count(*) FILTER (WHERE approved) AS approved,
        count(*) FILTER (WHERE NOT approved) AS declined,
        (array_agg(activity_seed) FILTER (WHERE activity_seed IS NOT NULL))[1] AS seed,
        max(activity_keep_from) AS keep_from
      FROM ${sql.table(source)} WHERE activity = 'track' GROUP BY card_id, activity_bucket
    ),
    activity_deltas AS (
      SELECT card_id, jsonb_object_agg(bucket::text, jsonb_build_array(approved, declined)) AS deltas,
        (array_agg(seed) FILTER (WHERE seed IS NOT NULL))[1] AS seed, max(keep_from) AS keep_from
      FROM activity_minutes GROUP BY card_id
    ),
    activity_kept AS (
      INSERT INTO authorization_rule_activity AS x (card_id, buckets, updated_at)
      SELECT card_id, ${addedBucketsSql(sql`coalesce(seed, '{}'::jsonb)`, sql`deltas`, sql`keep_from`)}, ${now}
      FROM activity_deltas ORDER BY card_id
      ON CONFLICT (card_id) DO UPDATE SET updated_at = ${activityTouchedSql(sql`x.updated_at`, sql`excluded.updated_at`)},
        buckets = ${addedBucketsSql(
          sql`x.buckets`,
          deltas,
          sql`(SELECT d.keep_from FROM activity_deltas AS d WHERE d.card_id = excluded.card_id)`,
        )}
    ),
    activity_dropped AS (
      DELETE FROM authorization_rule_activity WHERE card_id IN (SELECT card_id FROM ${sql.table(source)} WHERE activity = 'drop')
    )`
}
