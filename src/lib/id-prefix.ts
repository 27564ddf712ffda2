import { type RawBuilder, type SelectQueryBuilder, sql } from 'kysely'

/**
 * An id or the start of one: its kind (`card`) and the characters typed after the underscore. The console's
 * search finds every id that starts so.
 */
export const ID_OR_PREFIX = /^([a-z0-9]+)_([0-9A-Za-z]{0,40})$/

/** The characters of an id after its kind, in order (Crockford's base 32, as `newId` writes them). */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * The range of ids that start with `prefix` (its tail read in upper case, as ids are written):
 * `id >= from AND id < to`, `to` null when no id past `from` can be outside it. Built from the id alphabet's
 * own next character (not a sentinel), the range is right under any collation whose order of digits and
 * capitals is the usual one, so it is a range of an index whose columns end in `id`.
 */
export function idPrefixRange(prefix: string): { from: string; to: string | null } {
  const cut = prefix.indexOf('_') + 1
  const from = prefix.slice(0, cut) + prefix.slice(cut).toUpperCase()
  let tail = from.slice(cut)
  while (tail.length > 0) {
    const at = ALPHABET.indexOf(tail[tail.length - 1])
    if (at >= 0 && at < ALPHABET.length - 1)
      return { from, to: from.slice(0, cut) + tail.slice(0, -1) + ALPHABET[at + 1] }
    tail = tail.slice(0, -1)
  }
  return { from, to: null }
}

/** The condition "`id` starts with `prefix`" of a table's own id column: the range above, checked exactly. */
export function idStartsWith(prefix: string): RawBuilder<boolean> {
  const { from, to } = idPrefixRange(prefix)
  return to === null
    ? sql<boolean>`(id >= ${from} AND starts_with(id, ${from}))`
    : sql<boolean>`(id >= ${from} AND id < ${to} AND starts_with(id, ${from}))`
}

/**
 * `qb`, a select of a tenant's table (with `organization_id`, `environment` and `id`, indexed in that order), narrowed
 * to the scope's rows whose id starts with `prefix`: newest first, at most `limit`. The console's search by id.
 */
export function scopedIdPrefix<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  scope: { organizationId: string; environment: string },
  prefix: string,
  limit: number,
): QB {
  return (qb as SelectQueryBuilder<any, any, any>)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where(idStartsWith(prefix))
    .orderBy('id', 'desc')
    .limit(limit) as QB
}
