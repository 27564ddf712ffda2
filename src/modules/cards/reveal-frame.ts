/**
 * Whether a request for a hosted card details page comes from an iframe on the session's origin, as far as the
 * browser says. These headers are the browser's word: they stop a page opened in a tab, a frame on another site that
 * still sends its Referer, or a link followed from elsewhere, but any client other than a browser can send whatever it
 * likes. What holds whatever is sent is the response's `Content-Security-Policy: frame-ancestors <target_origin>`:
 * a browser renders the page only inside frames whose every ancestor is that origin (docs/cards.md, "Hosted card
 * details", "What the checks guarantee").
 */

/** What the browser said about the request; a member is absent when the client sent no such header. */
export interface FrameHeaders {
  secFetchDest?: string
  secFetchSite?: string
  referer?: string
  origin?: string
}

function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? null : origin
  } catch {
    return null
  }
}

/**
 * Why the request is not the page's iframe on `targetOrigin`, or null when nothing the browser sent says so:
 * `Sec-Fetch-Dest` other than `iframe` (a tab, a fetch, an image…); `Sec-Fetch-Site: none` (typed in or opened from a
 * bookmark); `Sec-Fetch-Site: same-origin` when the target is another origin than the service's (a page of the
 * service's own origin framing it); a `Referer` or `Origin` naming another origin than the target. An absent header
 * proves nothing either way (older browsers, `referrerpolicy="no-referrer"`), so it refuses nothing.
 */
export function frameRefusal(
  headers: FrameHeaders,
  targetOrigin: string,
  serviceOrigin: string,
): string | null {
  const dest = headers.secFetchDest
  if (dest !== undefined && dest !== 'iframe' && dest !== 'frame')
    return `requested as ${dest}, not as a frame`
  if (headers.secFetchSite === 'none') return 'opened directly, not by a page'
  if (headers.secFetchSite === 'same-origin' && targetOrigin !== serviceOrigin)
    return "requested by a page of the service's own origin"
  if (headers.referer !== undefined && originOf(headers.referer) !== targetOrigin)
    return 'requested by a page of another origin (Referer)'
  if (headers.origin !== undefined && headers.origin !== targetOrigin)
    return 'requested by a page of another origin (Origin)'
  return null
}
