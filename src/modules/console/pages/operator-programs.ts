import type { FastifyReply } from 'fastify'
import { getOrganization, organizationNames } from '../../oauth/index.js'
import { knownCurrency } from '../../../lib/currencies.js'
import { FX_MAX_MARKUP_BPS } from '../../../lib/fx.js'
import {
  createProgram,
  getProgram,
  listPlatformPrograms,
  updateProgram,
  type ProgramFxSettings,
  type ProgramRow,
} from '../../programs/index.js'
import {
  checkboxGroup,
  cursorPager,
  details,
  field,
  formatTime,
  getForm,
  postForm,
  selectField,
  table,
  type Flash,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import {
  audited,
  ENV_LABEL,
  environmentOptions,
  items,
  many,
  oneOf,
  organizationCell,
  ORGANIZATIONS,
  param,
  PROGRAMS,
  query,
  refusal,
} from './operator-shared.js'

const FORM_FACTORS: [string, string][] = [
  ['virtual', 'Virtual'],
  ['physical', 'Physical'],
]
/** The operator API's rule for `currencies` (ISO 4217 codes, 1 to 20). */
const CURRENCY = /^[A-Za-z]{3}$/
const FOREIGN_SPEND: [string, string][] = [
  ['allowed', 'Allowed: converted into the account currency'],
  ['blocked', 'Blocked: declined (currency_mismatch)'],
]
const FX_FEE: [string, string][] = [
  ['included', 'Included in the converted amount'],
  ['separate', 'Its own ledger entry (fx_fee)'],
]
const MARKUP = /^[0-9]{1,4}$/

/** The foreign-exchange settings as typed in a form: text, read by `fxSettings`. */
interface FxForm {
  foreign_spend?: string
  fx_markup_bps?: string
  fx_fee?: string
}

interface ProgramForm extends FxForm {
  organization_id?: string
  environment?: string
  name?: string
  processor?: string
  currencies?: string
  form_factors?: string[]
}

/** The three settings' fields (create and change share them), showing `form`'s values, else the defaults. */
function fxFields(form: FxForm): Html {
  return html`${selectField('foreign_spend', 'Foreign spend', FOREIGN_SPEND, form.foreign_spend ?? 'allowed', { hint: "A card spending in another currency than its account's." })}
${field({ name: 'fx_markup_bps', label: 'FX markup (basis points)', value: form.fx_markup_bps ?? '0', required: true, inputmode: 'numeric', maxlength: 4, hint: `0 to ${FX_MAX_MARKUP_BPS}, on every converted amount; 100 basis points are 1 %.` })}
${selectField('fx_fee', 'FX markup booked', FX_FEE, form.fx_fee ?? 'included')}`
}

const DEFAULT_FX: Required<ProgramFxSettings> = {
  foreign_spend: 'allowed',
  fx_markup_bps: 0,
  fx_fee: 'included',
}

/** The settings typed in a form, or the sentence that refuses them; a field the form did not send keeps `fallback`'s value. */
function fxSettings(
  form: FxForm,
  fallback: Required<ProgramFxSettings>,
): { settings: Required<ProgramFxSettings> } | { error: string } {
  const choice = <T extends string>(
    value: string | undefined,
    options: [string, string][],
    kept: T,
  ): T | undefined => (!value ? kept : (options.find(([v]) => v === value)?.[0] as T | undefined))
  const foreign = choice(form.foreign_spend, FOREIGN_SPEND, fallback.foreign_spend)
  const fee = choice(form.fx_fee, FX_FEE, fallback.fx_fee)
  const markup = (form.fx_markup_bps ?? '').trim() || String(fallback.fx_markup_bps)
  if (!foreign) return { error: 'Choose whether foreign spend is allowed or blocked.' }
  if (!fee) return { error: 'Choose where the FX markup is booked.' }
  if (!MARKUP.test(markup) || Number(markup) > FX_MAX_MARKUP_BPS)
    return {
      error: `The FX markup is a whole number of basis points from 0 to ${FX_MAX_MARKUP_BPS}.`,
    }
  return { settings: { foreign_spend: foreign, fx_markup_bps: Number(markup), fx_fee: fee } }
}

/** A program's settings in one line: "Allowed, 200 bps included", "Blocked". */
function fxSummary(p: ProgramRow): string {
  if (p.foreign_spend === 'blocked') return 'Blocked'
  return `Allowed, ${p.fx_markup_bps} bps ${p.fx_fee === 'separate' ? 'as its own entry' : 'included'}`
}

const fxFormOf = (ctx: PageContext): FxForm => ({
  foreign_spend: ctx.text('foreign_spend'),
  fx_markup_bps: ctx.text('fx_markup_bps'),
  fx_fee: ctx.text('fx_fee'),
})

async function programsPage(
  ctx: PageContext,
  flash?: Flash,
  form: ProgramForm = {},
  status = 200,
): Promise<FastifyReply> {
  const environments = ctx.deps.config.environments
  const organization = query(ctx, 'organization')
  const environment = oneOf(query(ctx, 'environment'), environments)
  const after = query(ctx, 'after')
  const filters = { organization, environment }
  const page = await listPlatformPrograms(
    ctx.deps,
    { organizationId: organization || undefined, environment: environment || undefined },
    { limit: 25, ...(after ? { starting_after: after } : {}) },
  )
  const names = await organizationNames(
    ctx.deps.db,
    page.data.map((p) => p.organization_id),
  )
  const processors = ctx.deps.processors.names()
  return ctx.render(
    {
      title: 'Programs',
      flash,
      body: html`${getForm(
        PROGRAMS,
        html`<div>${field({ name: 'organization', id: 'filter-organization', label: 'Organization id', value: organization, hint: 'org_…; empty: every organization', maxlength: 64 })}</div>
<div>${selectField('environment', 'Environment', [['', 'Both'], ...environmentOptions(environments)], environment, { id: 'filter-environment' })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
        'Filter programs',
      )}
${table({
  caption: 'Programs, oldest first',
  rows: page.data,
  empty: 'No program matches.',
  columns: [
    {
      header: 'Name',
      cell: (p: ProgramRow) =>
        html`<a href="${PROGRAMS}/${p.id}">${p.name}</a><br><code>${p.id}</code>`,
    },
    { header: 'Organization', cell: (p) => organizationCell(p.organization_id, names) },
    { header: 'Environment', cell: (p) => ENV_LABEL[p.environment] ?? p.environment },
    { header: 'Processor', cell: (p) => p.processor },
    { header: 'Currencies', cell: (p) => p.currencies.join(', ') },
    { header: 'Form factors', cell: (p) => p.form_factors.join(', ') },
    { header: 'Foreign spend', cell: (p) => fxSummary(p) },
    { header: 'Created', cell: (p) => formatTime(new Date(p.created_at)) },
  ],
})}
${cursorPager(PROGRAMS, filters, page.has_more ? page.next_cursor : null, !after)}
<section class="card" aria-labelledby="new-program-h"><h2 id="new-program-h">Create a program</h2>
${postForm(
  PROGRAMS,
  ctx.csrf,
  html`${field({ name: 'organization_id', label: 'Organization id', value: form.organization_id ?? organization, required: true, maxlength: 64, hint: "org_… (on the organization's page)" })}
${selectField('environment', 'Environment', environmentOptions(environments), form.environment ?? (environment || environments[0]), { id: 'new-environment' })}
${field({ name: 'name', label: 'Name', value: form.name, required: true, maxlength: 200 })}
${selectField(
  'processor',
  'Processor',
  processors.map((p) => [p, p]),
  form.processor ?? processors[0],
  { hint: 'The processors this deployment serves.' },
)}
${field({ name: 'currencies', label: 'Currencies', value: form.currencies ?? 'USD', required: true, maxlength: 200, hint: 'Three-letter codes (ISO 4217), separated by commas or spaces.' })}
${checkboxGroup('form_factors', 'Form factors', FORM_FACTORS, form.form_factors ?? [], { hint: 'None ticked: every form factor the processor issues.' })}
${fxFields(form)}
<button type="submit" class="primary">Create program</button>`,
  { label: 'Create a program' },
)}</section>`,
    },
    status,
  )
}

interface ChangeForm extends FxForm {
  name?: string
}

/** One program: what it is, and its name and foreign-exchange settings to change. */
async function programPage(
  ctx: PageContext,
  program: ProgramRow,
  flash?: Flash,
  form?: ChangeForm,
  status = 200,
): Promise<FastifyReply> {
  const organization = await getOrganization(ctx.deps, program.organization_id)
  const base = `${PROGRAMS}/${program.id}`
  const edit: ChangeForm = form ?? {
    name: program.name,
    foreign_spend: program.foreign_spend,
    fx_markup_bps: String(program.fx_markup_bps),
    fx_fee: program.fx_fee,
  }
  return ctx.render(
    {
      title: `Program: ${program.name}`,
      flash,
      body: html`${details([
        ['Id', html`<code>${program.id}</code>`],
        [
          'Organization',
          html`<a href="${ORGANIZATIONS}/${organization.id}">${organization.name}</a> <code>${organization.id}</code>`,
        ],
        ['Environment', ENV_LABEL[program.environment] ?? program.environment],
        ['Processor', program.processor],
        ['Currencies', program.currencies.join(', ')],
        ['Form factors', program.form_factors.join(', ')],
        [
          'Capabilities',
          program.capabilities.length > 0 ? program.capabilities.join(', ') : 'None',
        ],
        ['Foreign spend', program.foreign_spend === 'blocked' ? 'Blocked' : 'Allowed'],
        ['FX markup', `${program.fx_markup_bps} basis points`],
        [
          'FX markup booked',
          program.fx_fee === 'separate'
            ? 'As its own ledger entry (fx_fee)'
            : 'Included in the converted amount',
        ],
        ['Created', formatTime(new Date(program.created_at))],
        ['Changed', formatTime(new Date(program.updated_at))],
      ])}
<section class="card" aria-labelledby="edit-h"><h2 id="edit-h">Name and foreign exchange</h2>
<p class="muted">Changes apply to the authorizations that come after; those already made keep their amounts.</p>
${postForm(
  base,
  ctx.csrf,
  html`${field({ name: 'name', label: 'Name', value: edit.name, required: true, maxlength: 200 })}
${fxFields(edit)}
<button type="submit" class="primary">Save changes</button>`,
  { label: 'Change the name and foreign-exchange settings' },
)}</section>`,
    },
    status,
  )
}

/**
 * Programs (operators): every organization's, filtered by organization and environment, creating one, and one program's
 * page where its name and foreign-exchange settings change.
 */
export const operatorProgramPages: ConsolePage = {
  name: 'operator-programs',
  register(router, deps) {
    router.get(PROGRAMS, 'operator', (ctx) => programsPage(ctx))

    router.post(PROGRAMS, 'operator', async (ctx) => {
      const form: ProgramForm = {
        organization_id: ctx.text('organization_id').trim(),
        environment: ctx.text('environment'),
        name: ctx.text('name').trim(),
        processor: ctx.text('processor'),
        currencies: ctx.text('currencies'),
        form_factors: many(ctx, 'form_factors'),
        ...fxFormOf(ctx),
      }
      const refuse = (text: string) => programsPage(ctx, { kind: 'error', text }, form, 422)
      const currencies = items(form.currencies!)
      if (!deps.config.environments.includes(form.environment as never))
        return refuse('Choose an environment this deployment serves.')
      if (form.name === '' || form.name!.length > 200)
        return refuse('Give the program a name of 1 to 200 characters.')
      if (
        currencies.length === 0 ||
        currencies.length > 20 ||
        !currencies.every((c) => CURRENCY.test(c))
      ) {
        return refuse('Currencies are 1 to 20 three-letter codes such as USD or EUR.')
      }
      const unknown = currencies.find((c) => !knownCurrency(c.toUpperCase()))
      if (unknown !== undefined)
        return refuse(`${unknown} is not an ISO 4217 currency the service knows.`)
      if (!form.form_factors!.every((f) => FORM_FACTORS.some(([v]) => v === f)))
        return refuse('Choose virtual, physical or both.')
      const fx = fxSettings(form, DEFAULT_FX)
      if ('error' in fx) return refuse(fx.error)
      try {
        const organization = await getOrganization(ctx.deps, form.organization_id!)
        const program = await createProgram(
          ctx.deps,
          {
            organization_id: organization.id,
            environment: form.environment!,
            name: form.name!,
            processor: form.processor!,
            currencies,
            ...(form.form_factors!.length > 0 ? { form_factors: form.form_factors } : {}),
            ...fx.settings,
          },
          audited(
            ctx,
            'program.created',
            (p) => p.id,
            (p) => p.organization_id,
          ),
        )
        return ctx.redirect(`${PROGRAMS}?organization=${encodeURIComponent(organization.id)}`, {
          kind: 'ok',
          text: `Program ${program.name} (${program.id}) is created for ${organization.name}, ${ENV_LABEL[program.environment] ?? program.environment}.`,
        })
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return refuse(text)
      }
    })

    router.get(`${PROGRAMS}/:id`, 'operator', async (ctx) =>
      programPage(ctx, await getProgram(ctx.deps, param(ctx, 'id'))),
    )

    router.post(`${PROGRAMS}/:id`, 'operator', async (ctx) => {
      const program = await getProgram(ctx.deps, param(ctx, 'id'))
      const form: ChangeForm = { name: ctx.text('name').trim(), ...fxFormOf(ctx) }
      const refuse = (text: string) => programPage(ctx, program, { kind: 'error', text }, form, 422)
      if (form.name === '' || form.name!.length > 200)
        return refuse('Give the program a name of 1 to 200 characters.')
      const fx = fxSettings(form, program)
      if ('error' in fx) return refuse(fx.error)
      try {
        await updateProgram(
          ctx.deps,
          program.id,
          { name: form.name, ...fx.settings },
          audited(
            ctx,
            'program.updated',
            (p) => p.id,
            (p) => p.organization_id,
          ),
        )
        return ctx.redirect(`${PROGRAMS}/${program.id}`, {
          kind: 'ok',
          text: `Program ${form.name} is changed.`,
        })
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return refuse(text)
      }
    })
  },
}
