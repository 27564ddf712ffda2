import type { FastifyReply } from 'fastify'
import { isApiError } from '../../../http/errors.js'
import {
  getOrganization,
  listNetworkPolicies,
  organizationNames,
  putNetworkPolicy,
  type OrganizationView,
} from '../../oauth/index.js'
import {
  field,
  formatTime,
  getForm,
  postForm,
  table,
  textareaField,
  withQuery,
  type Flash,
} from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import {
  audited,
  ENV_LABEL,
  items,
  NETWORK_POLICIES,
  organizationCell,
  ORGANIZATIONS,
  query,
  refusal,
} from './operator-shared.js'

const HINT =
  "IP addresses or CIDR ranges, one a line. Empty: no restriction. Tokens are refused from any other address, whatever the client's own allowlist."

function chooser(ctx: PageContext, organization: string) {
  return getForm(
    NETWORK_POLICIES,
    html`<div>${field({ name: 'organization', label: 'Organization id', value: organization, required: true, maxlength: 64, hint: "org_… (on the organization's page)" })}</div>
<div><button type="submit" class="secondary">Show its policies</button></div>`,
    'Choose an organization',
  )
}

/** Without an organization: the choice of one, and every policy that restricts anything. */
async function overview(ctx: PageContext, flash?: Flash, status = 200): Promise<FastifyReply> {
  const policies = await listNetworkPolicies(ctx.deps.db, null)
  const names = await organizationNames(
    ctx.deps.db,
    policies.map((p) => p.organization_id),
  )
  return ctx.render(
    {
      title: 'Network policies',
      flash,
      body: html`<p class="muted">An organization's network policy lists the addresses its clients may ask for tokens from, per environment.</p>
${chooser(ctx, query(ctx, 'organization'))}
${table({
  caption: 'Organizations with a restriction',
  rows: policies,
  empty: 'No organization restricts the addresses of its clients.',
  columns: [
    { header: 'Organization', cell: (p) => organizationCell(p.organization_id, names) },
    { header: 'Environment', cell: (p) => ENV_LABEL[p.environment] ?? p.environment },
    { header: 'Allowed addresses', cell: (p) => html`<code>${p.ip_allowlist.join(', ')}</code>` },
    { header: 'Changed', cell: (p) => formatTime(new Date(p.updated_at)) },
    {
      header: 'Change',
      cell: (p) =>
        html`<a href="${withQuery(NETWORK_POLICIES, { organization: p.organization_id })}" aria-label="Change the policies of ${names.get(p.organization_id) ?? p.organization_id}">Change</a>`,
    },
  ],
})}`,
    },
    status,
  )
}

/** One organization's policy of each environment, each a form. `typed`: what a refused form held. */
async function organizationPolicies(
  ctx: PageContext,
  organization: OrganizationView,
  flash?: Flash,
  typed: { environment?: string; text?: string } = {},
  status = 200,
): Promise<FastifyReply> {
  const policies = await listNetworkPolicies(ctx.deps.db, organization.id)
  const forms = ctx.deps.config.environments.map((env) => {
    const stored = policies.find((p) => p.environment === env)
    const value = typed.environment === env ? typed.text : (stored?.ip_allowlist ?? []).join('\n')
    const label = ENV_LABEL[env] ?? env
    return html`<section class="card" aria-labelledby="np-${env}-h"><h2 id="np-${env}-h">${label}</h2>
<p>${stored && stored.ip_allowlist.length > 0 ? html`Restricted to ${stored.ip_allowlist.length} range${stored.ip_allowlist.length === 1 ? '' : 's'} since ${formatTime(new Date(stored.updated_at))}.` : 'No restriction: clients may ask for tokens from any address.'}</p>
${postForm(
  NETWORK_POLICIES,
  ctx.csrf,
  html`<input type="hidden" name="organization_id" value="${organization.id}"><input type="hidden" name="environment" value="${env}">
${textareaField({ name: 'ip_allowlist', id: `np-${env}`, label: `${label} allowlist`, value, rows: 4, mono: true, hint: HINT, maxlength: 4000 })}
<button type="submit" class="primary">Save the ${label.toLowerCase()} policy</button>`,
  { label: `${label} network policy` },
)}</section>`
  })
  return ctx.render(
    {
      title: `Network policies: ${organization.name}`,
      flash,
      body: html`<p><a href="${ORGANIZATIONS}/${organization.id}">${organization.name}</a> <code>${organization.id}</code> · <a href="${NETWORK_POLICIES}">Another organization</a></p>
${forms}`,
    },
    status,
  )
}

/** Network policies (operators): an organization's IP allowlist per environment, viewed and set (empty: no restriction). */
export const operatorNetworkPolicyPages: ConsolePage = {
  name: 'operator-network-policies',
  register(router, deps) {
    router.get(NETWORK_POLICIES, 'operator', async (ctx) => {
      const id = query(ctx, 'organization').trim()
      if (id === '') return overview(ctx)
      try {
        return await organizationPolicies(ctx, await getOrganization(ctx.deps, id))
      } catch (err) {
        if (isApiError(err) && err.code === 'organization_not_found')
          return overview(ctx, { kind: 'error', text: `There is no organization ${id}.` }, 404)
        throw err
      }
    })

    router.post(NETWORK_POLICIES, 'operator', async (ctx) => {
      const organization = await getOrganization(ctx.deps, ctx.text('organization_id'))
      const environment = ctx.text('environment')
      const text = ctx.text('ip_allowlist')
      if (!deps.config.environments.includes(environment as never)) {
        return organizationPolicies(
          ctx,
          organization,
          { kind: 'error', text: 'This deployment does not serve that environment.' },
          {},
          422,
        )
      }
      try {
        const policy = await putNetworkPolicy(
          ctx.deps,
          organization.id,
          environment,
          items(text),
          audited(
            ctx,
            'network_policy.updated',
            (p) => p.organization_id,
            (p) => p.organization_id,
          ),
        )
        const label = ENV_LABEL[environment] ?? environment
        return ctx.redirect(withQuery(NETWORK_POLICIES, { organization: organization.id }), {
          kind: 'ok',
          text:
            policy.ip_allowlist.length === 0
              ? `${label}: ${organization.name} has no restriction now.`
              : `${label}: ${organization.name}'s clients may ask for tokens from ${policy.ip_allowlist.length} range${policy.ip_allowlist.length === 1 ? '' : 's'} only.`,
        })
      } catch (err) {
        const message = refusal(err)
        if (message === null) throw err
        return organizationPolicies(
          ctx,
          organization,
          { kind: 'error', text: message },
          { environment, text },
          422,
        )
      }
    })
  },
}
