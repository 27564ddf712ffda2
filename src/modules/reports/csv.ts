/** A CSV column: its header and how a row gives its value; `text` marks free text that came from outside. */
export interface Column<T> {
  name: string
  value: (row: T) => string | number | null | undefined
  text?: boolean
}

/** Text a spreadsheet would evaluate as a formula when the cell is opened (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

/**
 * One field per RFC 4180: quoted when it holds a comma, quote or line break, quotes doubled; null is
 * empty. Free text that starts like a formula is prefixed with `'` so opening the file runs nothing.
 */
export function csvField(value: string | number | null | undefined, text = false): string {
  if (value === null || value === undefined) return ''
  let s = String(value)
  if (text && FORMULA_START.test(s)) s = `'${s}`
  return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/** The header line of a CSV with these columns (lines end with LF). */
export function csvHeader<T>(columns: Column<T>[]): string {
  return `${columns.map((c) => csvField(c.name)).join(',')}\n`
}

/** One data line. */
export function csvLine<T>(columns: Column<T>[], row: T): string {
  return `${columns.map((c) => csvField(c.value(row), c.text)).join(',')}\n`
}
