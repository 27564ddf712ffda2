import { sql, type RawBuilder } from 'kysely'
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
 * A common table expression `name`: the enabled, live rules that apply to each card of the caller's CTE `cards` (which
 * has `id`, `organization_id`, `environment`, `program_id`, `account_id`, `cardholder_id`), one row per card and rule:
 * the rules whose scope names the card's program, account, cardholder or the card itself at that level (the GIN index
 * `authorization_rules_targets` answers each), none of whose exclusions names the card, its account or its cardholder.
 * `reads_activity`: a condition rule reading `authorization_count_1h` or `decline_count_1h`.
 */
export function rulesCte(name: string, cards: string): RawBuilder<unknown> {
  const levels = [
    ['program', 'program_id'],
    ['account', 'account_id'],
    ['cardholder', 'cardholder_id'],
    ['card', 'id'],
  ] as const
  const reads = ACTIVITY_ATTRIBUTES.map(
    (attribute) => sql`r.parameters @> ${JSON.stringify({ conditions: [{ attribute }] })}::jsonb`,
  )
  return sql`${sql.id(name)} AS MATERIALIZED (
      SELECT c.id AS card_id, r.id, r.type, r.mode, r.parameters,
        (r.type = 'condition' AND (${sql.join(reads, sql` OR `)})) AS reads_activity
      FROM ${sql.table(cards)} AS c JOIN authorization_rules AS r
        ON r.organization_id = c.organization_id AND r.environment = c.environment
        AND r.deleted_at IS NULL AND r.status = 'enabled'
        AND (${sql.join(
          levels.map(
            ([level, column]) =>
              sql`(r.scope_level = ${sql.lit(level)} AND r.scope_ids @> jsonb_build_array(c.${sql.ref(column)}))`,
          ),
          sql` OR `,
        )})
        AND NOT (r.exclude_ids ?| ARRAY[c.id, c.account_id, c.cardholder_id])
    )`
}

/** The rules of `rulesCte` `rules` that apply to the card `cardId` (an expression of the caller's row), as a JSON array in id order. */
export function rulesJsonSql(rules: string, cardId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT coalesce(json_agg(json_build_array(r.id, r.type, r.mode, r.parameters, r.reads_activity) ORDER BY r.id), '[]'::json)
      FROM ${sql.table(rules)} AS r WHERE r.card_id = ${cardId})`
}

/** A rule as the decision evaluates it, with what its statement needs to know of it. */
export type DecisionRule = EvaluableRule & {
  /** A condition reading the card's activity (`authorization_count_1h`, `decline_count_1h`). */
  readsActivity: boolean
}

/** The rules of `rulesJsonSql` as read. */
export function decisionRulesOf(value: unknown): DecisionRule[] {
  return (
    (value ?? []) as [string, RuleParameters['type'], 'active' | 'shadow', unknown, boolean][]
  ).map(
    ([id, type, mode, parameters, readsActivity]) =>
      ({ id, type, mode, parameters, readsActivity }) as DecisionRule,
  )
}

/**
 * A common table expression `name`: each card of `cards` with its activity row, if it has one (`buckets`, `tracked`),
 * and whether a rule of `rules` (a `rulesCte`) reads it (`needed`). A card that needs it and has no row is seeded by
 * the caller from its own authorizations (the caller owns them): `activitySeedWanted`.
 */
export function activityCte(name: string, cards: string, rules: string): RawBuilder<unknown> {
  return sql`${sql.id(name)} AS MATERIALIZED (
      SELECT c.id AS card_id, x.buckets, x.card_id IS NOT NULL AS tracked,
        EXISTS (SELECT 1 FROM ${sql.table(rules)} AS r WHERE r.card_id = c.id AND r.reads_activity) AS needed
      FROM ${sql.table(cards)} AS c LEFT JOIN authorization_rule_activity AS x ON x.card_id = c.id
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
      SELECT card_id, ${mergedBucketsSql(sql`coalesce(seed, '{}'::jsonb)`, sql`deltas`, sql`keep_from`, true)}, ${now}
      FROM activity_deltas ORDER BY card_id
      ON CONFLICT (card_id) DO UPDATE SET updated_at = excluded.updated_at,
        buckets = ${mergedBucketsSql(
          sql`x.buckets`,
          deltas,
          sql`(SELECT d.keep_from FROM activity_deltas AS d WHERE d.card_id = excluded.card_id)`,
          true,
        )}
    ),
    activity_dropped AS (
      DELETE FROM authorization_rule_activity WHERE card_id IN (SELECT card_id FROM ${sql.table(source)} WHERE activity = 'drop')
    )`
}
