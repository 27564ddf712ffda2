/** ISO 8601 durations (`P1D`, `PT36H`, `P1M`, `P1Y2M3DT4H5M6S`, `P2W`) as sandbox clocks advance by them. */
const DURATION =
  /^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/

/**
 * `from` moved forward by `duration`, or null when it is not an ISO 8601 duration of whole units. Years and months
 * are calendar steps in UTC (31 January plus P1M is 3 March, as JavaScript dates count); weeks, days, hours,
 * minutes and seconds are fixed lengths.
 */
export function addDuration(from: Date, duration: string): Date | null {
  const m = DURATION.exec(duration)
  if (!m) return null
  const [y, mo, w, d, h, mi, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)))
  const out = new Date(from.getTime())
  if (y || mo) out.setUTCMonth(out.getUTCMonth() + mo + 12 * y)
  const ms = (((w * 7 + d) * 24 + h) * 60 + mi) * 60_000 + s * 1000
  const at = out.getTime() + ms
  return Number.isFinite(at) ? new Date(at) : null
}
