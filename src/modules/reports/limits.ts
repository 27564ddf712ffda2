/** Most data lines a report holds by default (the documented cap). */
export const DEFAULT_MAX_ROWS = 10_000_000

/**
 * How big reports get and how they are cut: a window with more than `maxRows` rows fails as `too_many_rows`
 * (about 2-3 GB of CSV at ten million rows: the bound on what one report keeps in the database); `partBytes`
 * is the size at which the generator writes a part, hence what generation and download hold in memory.
 * A settings object so tests and benchmarks can lower them.
 */
export const REPORT_LIMITS = { maxRows: DEFAULT_MAX_ROWS, partBytes: 1024 * 1024 }

/** The cap in words, for descriptions and pages ("10,000,000"). */
export function maxRowsText(rows: number = DEFAULT_MAX_ROWS): string {
  return rows.toLocaleString('en-US')
}
