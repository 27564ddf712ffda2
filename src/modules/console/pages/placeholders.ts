import { html } from '../../../lib/html.js'
import { PAGES, type PlannedPage } from '../nav.js'
import { sendMessage, type ConsoleRouter } from '../router.js'

/**
 * Runs after every page registered: each planned page (nav.ts) that no page serves yet gets a placeholder at
 * its address, under its area (so the role guard already holds there), naming what to use meanwhile. Then every
 * other /console address is a 404 page for a signed-in person (and the sign-in page for anyone else).
 */
export function registerPlaceholders(
  router: ConsoleRouter,
  pages: readonly PlannedPage[] = PAGES,
): void {
  for (const planned of pages) {
    if (router.hasGet(planned.href)) continue
    router.get(planned.href, planned.area, (ctx) =>
      ctx.render({
        title: planned.label,
        body: html`<p>This page is not in the console yet.</p>${planned.meanwhile ? html`<p>Meanwhile: ${planned.meanwhile}</p>` : ''}`,
      }),
    )
  }
  router.get('/console/*', 'account', (ctx) =>
    sendMessage(
      ctx.req,
      ctx.reply,
      ctx.deps,
      404,
      'Page not found',
      'There is no console page at this address.',
    ),
  )
}
