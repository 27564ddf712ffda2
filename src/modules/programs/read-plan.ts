import { sql, type RawBuilder } from 'kysely'
import type { ProgramsTable } from '../../db/types.js'

/**
 * What the programs module publishes for statements of other modules that read a program beside their own rows
 * (batched authorization decisions read each card's program's processor and FX settings in the statement that
 * reads the card): a common table expression `name` with the `columns` of the programs whose ids `programIds`
 * (a SQL subquery of the caller's statement) selects.
 */
export function programsCte(
  name: string,
  programIds: RawBuilder<unknown>,
  columns: readonly (keyof ProgramsTable)[],
): RawBuilder<unknown> {
  return sql`${sql.id(name)} AS MATERIALIZED (
      SELECT ${sql.join(columns.map((c) => sql.ref(c)))} FROM programs WHERE id IN (${programIds})
    )`
}
