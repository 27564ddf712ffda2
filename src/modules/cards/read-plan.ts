import { sql, type RawBuilder } from 'kysely'
import type { CardsTable } from './types.js'

/**
 * What the cards module publishes for statements of other modules that read many cards at once (batched
 * authorization decisions): a common table expression `name` with the cards whose ids are in the JSON
 * array `idsJson`, the `columns` asked for and each row's version (`xmin`: any committed change gives a
 * new one). `share`: the rows are locked against changes for the rest of the transaction.
 */
export function cardsCte(
  name: string,
  idsJson: string,
  columns: readonly (keyof CardsTable)[],
  share: boolean,
): RawBuilder<unknown> {
  return sql`${sql.id(name)} AS MATERIALIZED (
      SELECT ${sql.join(columns.map((c) => sql.ref(c)))}, xmin::text AS version FROM cards
      WHERE id = ANY(ARRAY(SELECT json_array_elements_text(${idsJson}::json)))
      ${share ? sql`FOR SHARE` : sql``}
    )`
}

/**
 * True while the card `cardId` is still the version `version` a decision read (SQL expressions of the caller's
 * statement). A scalar subquery with LIMIT 1, not EXISTS: in an expression PostgreSQL may answer EXISTS with a hashed
 * subplan, which reads every card to build its hash; this one is always a probe of the primary key per row.
 */
export function cardUnchangedSql(
  cardId: RawBuilder<unknown>,
  version: RawBuilder<unknown>,
): RawBuilder<boolean> {
  return sql<boolean>`coalesce((SELECT c.xmin::text = ${version} FROM cards AS c WHERE c.id = ${cardId} LIMIT 1), false)`
}
