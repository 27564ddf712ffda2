import type { FastifyReply } from 'fastify'
import { getOrganization, organizationNames } from '../../oauth/index.js'
import { createProgram, listPlatformPrograms, type ProgramRow } from '../../programs/index.js'
import { checkboxGroup, cursorPager, field, formatTime, getForm, postForm, selectField, table, type Flash } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { audited, ENV_LABEL, environmentOptions, items, many, oneOf, organizationCell, PROGRAMS, query, refusal } from './operator-shared.js'

const FORM_FACTORS: [string, string][] = [['virtual', 'Virtual'], ['physical', 'Physical']]
/** The operator API's rule for `currencies` (ISO 4217 codes, 1 to 20). */
const CURRENCY = /^[A-Za-z]{3}$/

interface ProgramForm { organization_id?: string; environment?: string; name?: string; processor?: string; currencies?: string; form_factors?: string[] }

async function programsPage(ctx: PageContext, flash?: Flash, form: ProgramForm = {}, status = 200): Promise<FastifyReply> {
  const environments = ctx.deps.config.environments
  const organization = query(ctx, 'organization')
  const environment = oneOf(query(ctx, 'environment'), environments)
  const after = query(ctx, 'after')
  const filters = { organization, environment }
  const page = await listPlatformPrograms(ctx.deps, { organizationId: organization || undefined, environment: environment || undefined }, { limit: 25, ...(after ? { starting_after: after } : {}) })
  const names = await organizationNames(ctx.deps.db, page.data.map((p) => p.organization_id))
  const processors = ctx.deps.processors.names()
  return ctx.render({
    title: 'Programs',
    flash,
    body: html`${getForm(PROGRAMS, html`<div>${field({ name: 'organization', id: 'filter-organization', label: 'Organization id', value: organization, hint: 'org_…; empty: every organization', maxlength: 64 })}</div>
<div>${selectField('environment', 'Environment', [['', 'Both'], ...environmentOptions(environments)], environment, { id: 'filter-environment' })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`, 'Filter programs')}
${table({
  caption: 'Programs, oldest first',
  rows: page.data,
  empty: 'No program matches.',
  columns: [
    { header: 'Name', cell: (p: ProgramRow) => html`${p.name}<br><code>${p.id}</code>` },
    { header: 'Organization', cell: (p) => organizationCell(p.organization_id, names) },
    { header: 'Environment', cell: (p) => ENV_LABEL[p.environment] ?? p.environment },
    { header: 'Processor', cell: (p) => p.processor },
    { header: 'Currencies', cell: (p) => p.currencies.join(', ') },
    { header: 'Form factors', cell: (p) => p.form_factors.join(', ') },
    { header: 'Created', cell: (p) => formatTime(new Date(p.created_at)) },
  ],
})}
${cursorPager(PROGRAMS, filters, page.has_more ? page.next_cursor : null, !after)}
<section class="card" aria-labelledby="new-program-h"><h2 id="new-program-h">Create a program</h2>
${postForm(PROGRAMS, ctx.csrf, html`${field({ name: 'organization_id', label: 'Organization id', value: form.organization_id ?? organization, required: true, maxlength: 64, hint: 'org_… (on the organization\'s page)' })}
${selectField('environment', 'Environment', environmentOptions(environments), form.environment ?? (environment || environments[0]), { id: 'new-environment' })}
${field({ name: 'name', label: 'Name', value: form.name, required: true, maxlength: 200 })}
${selectField('processor', 'Processor', processors.map((p) => [p, p]), form.processor ?? processors[0], { hint: 'The processors this deployment serves.' })}
${field({ name: 'currencies', label: 'Currencies', value: form.currencies ?? 'USD', required: true, maxlength: 200, hint: 'Three-letter codes (ISO 4217), separated by commas or spaces.' })}
${checkboxGroup('form_factors', 'Form factors', FORM_FACTORS, form.form_factors ?? [], { hint: 'None ticked: every form factor the processor issues.' })}
<button type="submit" class="primary">Create program</button>`, { label: 'Create a program' })}</section>`,
  }, status)
}

/** Programs (operators): every organization's, filtered by organization and environment, and creating one. */
export const operatorProgramPages: ConsolePage = {
  name: 'operator-programs',
  register(router, deps) {
    router.get(PROGRAMS, 'operator', (ctx) => programsPage(ctx))

    router.post(PROGRAMS, 'operator', async (ctx) => {
      const form: ProgramForm = {
        organization_id: ctx.text('organization_id').trim(), environment: ctx.text('environment'), name: ctx.text('name').trim(),
        processor: ctx.text('processor'), currencies: ctx.text('currencies'), form_factors: many(ctx, 'form_factors'),
      }
      const refuse = (text: string) => programsPage(ctx, { kind: 'error', text }, form, 422)
      const currencies = items(form.currencies!)
      if (!deps.config.environments.includes(form.environment as never)) return refuse('Choose an environment this deployment serves.')
      if (form.name === '' || form.name!.length > 200) return refuse('Give the program a name of 1 to 200 characters.')
      if (currencies.length === 0 || currencies.length > 20 || !currencies.every((c) => CURRENCY.test(c))) {
        return refuse('Currencies are 1 to 20 three-letter codes such as USD or EUR.')
      }
      if (!form.form_factors!.every((f) => FORM_FACTORS.some(([v]) => v === f))) return refuse('Choose virtual, physical or both.')
      try {
        const organization = await getOrganization(ctx.deps, form.organization_id!)
        const program = await createProgram(ctx.deps, {
          organization_id: organization.id, environment: form.environment!, name: form.name!, processor: form.processor!, currencies,
          ...(form.form_factors!.length > 0 ? { form_factors: form.form_factors } : {}),
        }, audited(ctx, 'program.created', (p) => p.id, (p) => p.organization_id))
        return ctx.redirect(`${PROGRAMS}?organization=${encodeURIComponent(organization.id)}`, {
          kind: 'ok', text: `Program ${program.name} (${program.id}) is created for ${organization.name}, ${ENV_LABEL[program.environment] ?? program.environment}.`,
        })
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return refuse(text)
      }
    })
  },
}
