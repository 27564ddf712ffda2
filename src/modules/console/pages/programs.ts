import { listPrograms, type ProgramView } from '../../programs/index.js'
import { cursorPager, table } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage } from '../router.js'
import { apiCtx } from './changes.js'
import { pageOf, queryText } from './form-input.js'
import { when } from './object-display.js'
import { orProblem } from './refusals.js'

const PROGRAMS = '/console/programs'

/**
 * The organization's programs of the selected environment (read only: the platform operator creates them), as
 * `GET /v1/programs` lists them: what each issues (currencies, form factors, card types) and which processor runs it.
 */
export const programPages: ConsolePage = {
  name: 'programs',
  register(router) {
    router.get(PROGRAMS, 'organization', async (ctx) => {
      const page = await orProblem(ctx, 'Programs', () =>
        listPrograms(ctx.deps, apiCtx(ctx), pageOf(ctx)),
      )
      if ('sent' in page) return page.sent
      return ctx.render({
        title: 'Programs',
        body: html`<p class="muted">A program is what your organization issues in this environment: its processor, currencies,
card types and form factors. The platform operator sets programs up; ask them for a new one. Cards and accounts name one with <code>program_id</code>.</p>
${table({
  caption: 'Programs of this environment, oldest first',
  rows: page.data,
  empty:
    'This environment has no program yet. The platform operator creates one (npx svc program create).',
  columns: [
    { header: 'Name', cell: (p: ProgramView) => html`${p.name}<br><code>${p.id}</code>` },
    { header: 'Processor', cell: (p) => p.processor },
    { header: 'Currencies', cell: (p) => p.currencies.join(', ') },
    { header: 'Form factors', cell: (p) => p.form_factors.join(', ') },
    { header: 'Card types', cell: (p) => p.card_types.join(', ') },
    { header: 'Created', cell: (p) => when(p.created_at) },
  ],
})}${cursorPager(PROGRAMS, {}, page.next_cursor, !queryText(ctx, 'after'))}`,
      })
    })
  },
}
