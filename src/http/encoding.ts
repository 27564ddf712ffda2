/**
 * Content negotiation for the few large bodies the service keeps compressed in memory (/openapi.json, the docs
 * pages and their assets): which of brotli, gzip or none to send for an `Accept-Encoding` header (RFC 9110, 12.5.3).
 * Brotli wins a tie (smaller); a coding with `q=0` is refused; `*` stands for any coding not named.
 */
export type Encoding = 'br' | 'gzip' | 'identity'

export function preferredEncoding(header: string | string[] | undefined): Encoding {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '')
  const q = new Map<string, number>()
  for (const part of text.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    if (!name) continue
    const weight = params
      .map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1])
      .find((v) => v !== undefined)
    q.set(name, weight === undefined ? 1 : Number(weight))
  }
  const of = (coding: string) => q.get(coding) ?? q.get('*') ?? 0
  const br = of('br')
  const gz = Math.max(of('gzip'), q.get('x-gzip') ?? 0)
  if (br > 0 && br >= gz) return 'br'
  if (gz > 0) return 'gzip'
  return 'identity'
}
