import type { FastifyRequest } from 'fastify'

/**
 * Whether a form post came from this service's own pages, judged by its Origin header beside the form's
 * CSRF token: an Origin naming another site is refused. None, or `null` (what browsers send under
 * `Referrer-Policy: no-referrer`, even for a page's own forms), is left to the token alone.
 */
export function sameOriginPost(req: FastifyRequest, baseUrl: string): boolean {
  const origin = req.headers.origin
  if (origin === undefined || origin === 'null') return true
  try {
    const host = new URL(origin).host
    return host === req.headers.host || host === new URL(baseUrl).host
  } catch {
    return false
  }
}
