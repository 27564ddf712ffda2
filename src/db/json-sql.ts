import { sql, type RawBuilder } from 'kysely'

/** A timestamptz column as `Date.prototype.toISOString` writes it (UTC, milliseconds, `Z`), for JSON built in SQL. */
export function isoText(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
}
