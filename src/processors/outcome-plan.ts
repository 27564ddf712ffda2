import { sql, type RawBuilder } from 'kysely'

/**
 * The processors' write plan for statements that record many outcomes at once (batched authorization
 * decisions): a common table expression named `name` marking the intents whose ids `ids` selects as
 * succeeded. The one-row path is `recordOutcome` (calls.ts).
 */
export function operationsSucceededCte(
  name: string,
  ids: RawBuilder<unknown>,
  now: Date,
): RawBuilder<unknown> {
  return sql`${sql.id(name)} AS (
      UPDATE processor_operations SET state = 'succeeded', updated_at = ${now}
      WHERE id = ANY(ARRAY(${ids}))
    )`
}
