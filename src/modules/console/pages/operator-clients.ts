import type { FastifyReply } from 'fastify'
import {
  createClient,
  DEFAULT_CLIENT_SCOPES,
  getClient,
  getOrganization,
  listPlatformClients,
  organizationNames,
  revokeClient,
  SCOPES,
  updateClient,
  type ClientRecord,
} from '../../oauth/index.js'
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
  textareaField,
  withQuery,
  type Flash,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import { holdsPrivateKey, PRIVATE_KEY_REFUSAL } from '../keys.js'
import type { ConsolePage, PageContext } from '../router.js'
import {
  addKeySection,
  ALLOWLIST_HINT,
  allowlistChanged,
  allowlistOf,
  allowlistText,
  keptKeys,
  keysAfterAdding,
  keysAfterRemoving,
  keysTable,
  KEYS_HINT,
  LABEL_REFUSAL,
  pastedKeys,
} from './client-forms.js'
import {
  audited,
  CLIENTS,
  ENV_LABEL,
  environmentOptions,
  many,
  oneOf,
  organizationCell,
  ORGANIZATIONS,
  param,
  query,
  refusal,
} from './operator-shared.js'

const STATUSES = ['active', 'revoked']
const SCOPE_OPTIONS: [string, string][] = SCOPES.map((s) => [s, s])

async function clientsPage(ctx: PageContext): Promise<FastifyReply> {
  const environments = ctx.deps.config.environments
  const organization = query(ctx, 'organization')
  const environment = oneOf(query(ctx, 'environment'), environments)
  const status = oneOf(query(ctx, 'status'), STATUSES)
  const after = query(ctx, 'after')
  const filters = { organization, environment, status }
  const page = await listPlatformClients(
    ctx.deps,
    {
      organizationId: organization || undefined,
      environment: environment || undefined,
      status: status || undefined,
    },
    { limit: 25, ...(after ? { starting_after: after } : {}) },
  )
  const names = await organizationNames(
    ctx.deps.db,
    page.data.map((c) => c.organization_id),
  )
  return ctx.render({
    title: 'API clients',
    body: html`<p><a href="${withQuery(`${CLIENTS}/new`, { organization })}">Register a client</a></p>
${getForm(
  CLIENTS,
  html`<div>${field({ name: 'organization', id: 'filter-organization', label: 'Organization id', value: organization, hint: 'org_…; empty: every organization', maxlength: 64 })}</div>
<div>${selectField('environment', 'Environment', [['', 'Both'], ...environmentOptions(environments)], environment, { id: 'filter-environment' })}</div>
<div>${selectField(
    'status',
    'Status',
    [
      ['', 'Any'],
      ['active', 'Active'],
      ['revoked', 'Revoked'],
    ],
    status,
    { id: 'filter-status' },
  )}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
  'Filter clients',
)}
${table({
  caption: 'API clients, oldest first',
  rows: page.data,
  empty: 'No client matches.',
  columns: [
    {
      header: 'Label',
      cell: (c: ClientRecord) =>
        html`<a href="${CLIENTS}/${c.id}">${c.label}</a><br><code>${c.id}</code>`,
    },
    { header: 'Organization', cell: (c) => organizationCell(c.organization_id, names) },
    { header: 'Environment', cell: (c) => ENV_LABEL[c.environment] ?? c.environment },
    { header: 'Status', cell: (c) => c.status },
    { header: 'Keys', cell: (c) => c.jwks.keys.length, numeric: true },
    { header: 'Created', cell: (c) => formatTime(new Date(c.created_at)) },
  ],
})}
${cursorPager(CLIENTS, filters, page.has_more ? page.next_cursor : null, !after)}`,
  })
}

interface RegisterForm {
  organization_id?: string
  environment?: string
  label?: string
  keys?: string
  scopes?: string[]
  ip_allowlist?: string
}

function registerPage(
  ctx: PageContext,
  form: RegisterForm = {},
  flash?: Flash,
  status = 200,
): FastifyReply {
  const environments = ctx.deps.config.environments
  return ctx.render(
    {
      title: 'Register an API client',
      flash,
      body: html`<p class="muted">The client signs its token requests with a private key that never leaves its systems; register its public key here.</p>
<div class="card">${postForm(
        CLIENTS,
        ctx.csrf,
        html`${field({ name: 'organization_id', label: 'Organization id', value: form.organization_id ?? query(ctx, 'organization'), required: true, maxlength: 64, hint: "org_… (on the organization's page)" })}
${selectField('environment', 'Environment', environmentOptions(environments), form.environment ?? environments[0])}
${field({ name: 'label', label: 'Label', value: form.label, required: true, maxlength: 200, hint: 'What the client is, for the people who read this list: "Payments backend".' })}
${textareaField({ name: 'keys', label: 'Public keys', value: form.keys, rows: 8, required: true, mono: true, hint: KEYS_HINT, maxlength: 12_000 })}
${checkboxGroup('scopes', 'Scopes', SCOPE_OPTIONS, form.scopes ?? DEFAULT_CLIENT_SCOPES, { hint: 'What its tokens may do. Ticked at first: the defaults (everything but card secrets).' })}
${textareaField({ name: 'ip_allowlist', label: 'IP allowlist', value: form.ip_allowlist, rows: 3, mono: true, hint: ALLOWLIST_HINT, maxlength: 4000 })}
<button type="submit" class="primary">Register client</button>`,
        { label: 'Register an API client' },
      )}</div>`,
    },
    status,
  )
}

interface ClientFormState {
  edit?: { label: string; scopes: string[]; ip_allowlist: string }
  keys?: string
}

async function clientPage(
  ctx: PageContext,
  client: ClientRecord,
  flash?: Flash,
  state: ClientFormState = {},
  status = 200,
): Promise<FastifyReply> {
  const organization = await getOrganization(ctx.deps, client.organization_id)
  const active = client.status === 'active'
  const base = `${CLIENTS}/${client.id}`
  const edit = state.edit ?? {
    label: client.label,
    scopes: client.scopes,
    ip_allowlist: allowlistText(client),
  }
  const manage: Html = active
    ? html`${addKeySection(client, base, ctx.csrf, state.keys)}
<section class="card" aria-labelledby="edit-h"><h2 id="edit-h">Label, scopes and allowlist</h2>
<p class="muted">Scope changes apply to the next token; an allowlist change applies at once.</p>
${postForm(
  base,
  ctx.csrf,
  html`${field({ name: 'label', label: 'Label', value: edit.label, required: true, maxlength: 200 })}
${checkboxGroup('scopes', 'Scopes', SCOPE_OPTIONS, edit.scopes)}
${textareaField({ name: 'ip_allowlist', label: 'IP allowlist', value: edit.ip_allowlist, rows: 3, mono: true, hint: ALLOWLIST_HINT, maxlength: 4000 })}
<button type="submit" class="primary">Save changes</button>`,
  { label: 'Change label, scopes and allowlist' },
)}</section>
<section class="card" aria-labelledby="revoke-h"><h2 id="revoke-h">Revoke</h2>
<p>Revoking is immediate and final: every token of the client stops working and it gets no new one.</p>
<p><a href="${base}/revoke">Revoke this client…</a></p></section>`
    : html`<p class="muted">This client is revoked: it can no longer be changed.</p>`
  return ctx.render(
    {
      title: `API client: ${client.label}`,
      flash,
      body: html`${details([
        ['Id', html`<code>${client.id}</code>`],
        [
          'Organization',
          html`<a href="${ORGANIZATIONS}/${organization.id}">${organization.name}</a> <code>${organization.id}</code>`,
        ],
        ['Environment', ENV_LABEL[client.environment] ?? client.environment],
        [
          'Status',
          active
            ? 'Active'
            : html`Revoked ${client.revoked_at ? formatTime(new Date(client.revoked_at)) : ''}`,
        ],
        [
          'Scopes',
          client.scopes.length > 0 ? html`<code>${client.scopes.join(' ')}</code>` : 'None',
        ],
        [
          'IP allowlist',
          client.ip_allowlist && client.ip_allowlist.length > 0
            ? html`<code>${client.ip_allowlist.join(', ')}</code>`
            : 'Any address',
        ],
        ['Created', formatTime(new Date(client.created_at))],
      ])}
${keysTable(client, base, ctx.csrf)}
${manage}`,
    },
    status,
  )
}

async function changeFailed(
  ctx: PageContext,
  id: string,
  err: unknown,
  state: ClientFormState,
): Promise<FastifyReply> {
  const text = refusal(err)
  if (text === null) throw err
  return clientPage(ctx, await getClient(ctx.deps, id), { kind: 'error', text }, state, 422)
}

const organizationOf = (c: ClientRecord) => c.organization_id

/**
 * API clients of every organization (operators): the list, registering one (a pasted JWK Set or PEM public key),
 * its label, scopes and allowlist, adding and removing keys, and revoking it after a confirmation.
 */
export const operatorClientPages: ConsolePage = {
  name: 'operator-clients',
  register(router, deps) {
    router.get(CLIENTS, 'operator', (ctx) => clientsPage(ctx))

    router.get(`${CLIENTS}/new`, 'operator', (ctx) => registerPage(ctx))

    router.post(CLIENTS, 'operator', async (ctx) => {
      const text = ctx.text('keys')
      const form: RegisterForm = {
        organization_id: ctx.text('organization_id').trim(),
        environment: ctx.text('environment'),
        label: ctx.text('label').trim(),
        keys: keptKeys(text),
        scopes: many(ctx, 'scopes'),
        ip_allowlist: ctx.text('ip_allowlist'),
      }
      const refuse = (message: string) =>
        registerPage(ctx, form, { kind: 'error', text: message }, 422)
      if (holdsPrivateKey(text)) return refuse(PRIVATE_KEY_REFUSAL)
      if (!deps.config.environments.includes(form.environment as never))
        return refuse('Choose an environment this deployment serves.')
      if (form.label === '' || form.label!.length > 200) return refuse(LABEL_REFUSAL)
      const pasted = pastedKeys(text)
      if ('error' in pasted) return refuse(pasted.error)
      try {
        const client = await createClient(
          ctx.deps,
          {
            organization_id: form.organization_id!,
            environment: form.environment!,
            label: form.label!,
            scopes: form.scopes,
            jwks: { keys: pasted.keys },
            ip_allowlist: allowlistOf(form.ip_allowlist!),
          },
          audited(ctx, 'client.created', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: `Client ${client.label} is registered (${client.id}).`,
        })
      } catch (err) {
        const message = refusal(err)
        if (message === null) throw err
        return refuse(message)
      }
    })

    router.get(`${CLIENTS}/:id`, 'operator', async (ctx) =>
      clientPage(ctx, await getClient(ctx.deps, param(ctx, 'id'))),
    )

    router.post(`${CLIENTS}/:id`, 'operator', async (ctx) => {
      const client = await getClient(ctx.deps, param(ctx, 'id'))
      const edit = {
        label: ctx.text('label').trim(),
        scopes: many(ctx, 'scopes'),
        ip_allowlist: ctx.text('ip_allowlist'),
      }
      if (edit.label === '' || edit.label.length > 200)
        return clientPage(ctx, client, { kind: 'error', text: LABEL_REFUSAL }, { edit }, 422)
      const next = allowlistOf(edit.ip_allowlist)
      try {
        await updateClient(
          ctx.deps,
          client.id,
          {
            label: edit.label,
            scopes: edit.scopes,
            ...(allowlistChanged(next, client) ? { ip_allowlist: next } : {}),
          },
          audited(ctx, 'client.updated', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: 'The client is changed.',
        })
      } catch (err) {
        return changeFailed(ctx, client.id, err, { edit })
      }
    })

    router.post(`${CLIENTS}/:id/keys`, 'operator', async (ctx) => {
      const client = await getClient(ctx.deps, param(ctx, 'id'))
      const text = ctx.text('keys')
      const state = { keys: keptKeys(text) }
      const next = keysAfterAdding(client, text)
      if ('error' in next)
        return clientPage(ctx, client, { kind: 'error', text: next.error }, state, 422)
      try {
        await updateClient(
          ctx.deps,
          client.id,
          { jwks: { keys: next.keys } },
          audited(ctx, 'client.key_added', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: `Key ${next.added} is added; the client may sign with it now.`,
        })
      } catch (err) {
        return changeFailed(ctx, client.id, err, state)
      }
    })

    router.post(`${CLIENTS}/:id/keys/remove`, 'operator', async (ctx) => {
      const client = await getClient(ctx.deps, param(ctx, 'id'))
      const kid = ctx.text('kid')
      const keys = keysAfterRemoving(client, kid)
      if (keys === null)
        return clientPage(
          ctx,
          client,
          { kind: 'error', text: 'The client has no key with this kid.' },
          {},
          422,
        )
      try {
        await updateClient(
          ctx.deps,
          client.id,
          { jwks: { keys } },
          audited(ctx, 'client.key_removed', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: `Key ${kid} is removed: assertions signed with it are refused from now on.`,
        })
      } catch (err) {
        return changeFailed(ctx, client.id, err, {})
      }
    })

    router.get(`${CLIENTS}/:id/revoke`, 'operator', async (ctx) => {
      const client = await getClient(ctx.deps, param(ctx, 'id'))
      if (client.status !== 'active')
        return ctx.redirect(`${CLIENTS}/${client.id}`, {
          kind: 'info',
          text: 'This client is already revoked.',
        })
      const organization = await getOrganization(ctx.deps, client.organization_id)
      return ctx.render({
        title: `Revoke ${client.label}?`,
        body: html`<div class="card"><p>Revoke the ${ENV_LABEL[client.environment] ?? client.environment} client <strong>${client.label}</strong> (<code>${client.id}</code>) of ${organization.name}?</p>
<p>Every token it holds stops working at once, and it can get no new one. <strong>This cannot be undone</strong>: to let the integration work again, register a new client.</p>
${postForm(`${CLIENTS}/${client.id}/revoke`, ctx.csrf, html`<button type="submit" class="danger">Revoke client</button>`, { label: 'Confirm the revocation' })}
<p><a href="${CLIENTS}/${client.id}">Cancel</a></p></div>`,
      })
    })

    router.post(`${CLIENTS}/:id/revoke`, 'operator', async (ctx) => {
      const client = await getClient(ctx.deps, param(ctx, 'id'))
      if (client.status !== 'active')
        return ctx.redirect(`${CLIENTS}/${client.id}`, {
          kind: 'info',
          text: 'This client is already revoked.',
        })
      await revokeClient(
        ctx.deps,
        client.id,
        audited(ctx, 'client.revoked', (c) => c.id, organizationOf),
      )
      return ctx.redirect(`${CLIENTS}/${client.id}`, {
        kind: 'ok',
        text: `Client ${client.label} is revoked.`,
      })
    })
  },
}
