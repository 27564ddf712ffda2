/**
 * An id or the start of one: its kind (`card`) and the characters typed after the underscore. The console's
 * search finds every id that starts so.
 */
export const ID_OR_PREFIX = /^([a-z0-9]+)_([0-9A-Za-z]{0,40})$/

/**
 * The range of ids that start with `prefix`: `id >= from AND id < to`. The database compares text in byte
 * order (collation C), so this is a range scan of an index whose columns end in `id`.
 */
export function idPrefixRange(prefix: string): { from: string; to: string } {
  return { from: prefix, to: `${prefix}\uffff` }
}

/** What a search finds: the object's id and the words that name it in a list. */
export interface SearchHit {
  id: string
  label: string
}
