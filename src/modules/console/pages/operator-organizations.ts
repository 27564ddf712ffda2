import type { FastifyReply } from 'fastify'
import {
  getOrganization,
  listClients,
  listNetworkPolicies,
  listOrganizations,
  createOrganization,
  type OrganizationView,
} from '../../oauth/index.js'
import { listOrganizationPrograms } from '../../programs/index.js'
import { inviteUser, listTeam, MEMBER_ROLES, type MemberRole } from '../../users/index.js'
import {
  cursorPager,
  details,
  field,
  formatTime,
  postForm,
  selectField,
  table,
  withQuery,
  type Flash,
} from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import {
  audited,
  CLIENTS,
  ENV_LABEL,
  NETWORK_POLICIES,
  ORGANIZATIONS,
  PROGRAMS,
  query,
  param,
  refusal,
} from './operator-shared.js'

const ROLE_OPTIONS: [string, string][] = [
  ['owner', 'Owner: everything, team included'],
  ['developer', 'Developer: everything but the team'],
  ['viewer', 'Viewer: read only'],
]
/** How many of an organization's programs and clients its page shows before linking to the full list. */
const SHOWN = 50

async function organizationsPage(
  ctx: PageContext,
  flash?: Flash,
  name = '',
  status = 200,
): Promise<FastifyReply> {
  const after = query(ctx, 'after')
  const page = await listOrganizations(ctx.deps, {
    limit: 25,
    ...(after ? { starting_after: after } : {}),
  })
  return ctx.render(
    {
      title: 'Organizations',
      flash,
      body: html`<section class="card" aria-labelledby="new-org-h"><h2 id="new-org-h">Create an organization</h2>
${postForm(
  ORGANIZATIONS,
  ctx.csrf,
  html`${field({ name: 'name', label: 'Name', value: name, required: true, maxlength: 200, autocomplete: 'organization' })}
<button type="submit" class="primary">Create organization</button>`,
  { label: 'Create an organization' },
)}</section>
${table({
  caption: 'Organizations, oldest first',
  rows: page.data,
  empty: 'No organization yet.',
  columns: [
    { header: 'Name', cell: (o) => html`<a href="${ORGANIZATIONS}/${o.id}">${o.name}</a>` },
    { header: 'Id', cell: (o) => html`<code>${o.id}</code>` },
    { header: 'Created', cell: (o) => formatTime(new Date(o.created_at)) },
  ],
})}
${cursorPager(ORGANIZATIONS, {}, page.has_more ? page.next_cursor : null, !after)}`,
    },
    status,
  )
}

async function organizationPage(
  ctx: PageContext,
  organization: OrganizationView,
  flash?: Flash,
  invite: { email?: string; role?: string } = {},
  status = 200,
): Promise<FastifyReply> {
  const id = organization.id
  const [programs, clients, members, policies] = await Promise.all([
    listOrganizationPrograms(ctx.deps, id, { limit: SHOWN }),
    listClients(ctx.deps, id, { limit: SHOWN }),
    listTeam(ctx.deps, id),
    listNetworkPolicies(ctx.deps.db, id),
  ])
  const policyOf = (env: string) => policies.find((p) => p.environment === env)?.ip_allowlist ?? []
  return ctx.render(
    {
      title: organization.name,
      flash,
      body: html`${details([
        ['Id', html`<code>${id}</code>`],
        ['Created', formatTime(new Date(organization.created_at))],
      ])}
<h2 id="programs-h">Programs</h2>
${table({
  caption: 'Programs, both environments',
  rows: programs.data,
  empty: 'No program yet.',
  columns: [
    { header: 'Name', cell: (p) => p.name },
    { header: 'Environment', cell: (p) => ENV_LABEL[p.environment] ?? p.environment },
    { header: 'Processor', cell: (p) => p.processor },
    { header: 'Currencies', cell: (p) => p.currencies.join(', ') },
    { header: 'Id', cell: (p) => html`<code>${p.id}</code>` },
  ],
})}
<p><a href="${withQuery(PROGRAMS, { organization: id })}#new-program-h">Create a program</a>${programs.has_more ? html` · <a href="${withQuery(PROGRAMS, { organization: id })}">All its programs</a>` : ''}</p>
<h2 id="clients-h">API clients</h2>
${table({
  caption: 'API clients, both environments',
  rows: clients.data,
  empty: 'No client yet.',
  columns: [
    { header: 'Label', cell: (c) => html`<a href="${CLIENTS}/${c.id}">${c.label}</a>` },
    { header: 'Environment', cell: (c) => ENV_LABEL[c.environment] ?? c.environment },
    { header: 'Status', cell: (c) => c.status },
    { header: 'Id', cell: (c) => html`<code>${c.id}</code>` },
  ],
})}
<p><a href="${withQuery(`${CLIENTS}/new`, { organization: id })}">Register a client</a>${clients.has_more ? html` · <a href="${withQuery(CLIENTS, { organization: id })}">All its clients</a>` : ''}</p>
<h2 id="np-h">Network policies</h2>
${table({
  caption: 'IP allowlists by environment',
  rows: ctx.deps.config.environments.map((env) => ({ env, list: policyOf(env) })),
  empty: '',
  columns: [
    { header: 'Environment', cell: (r) => ENV_LABEL[r.env] ?? r.env },
    {
      header: 'Allowed addresses',
      cell: (r) =>
        r.list.length === 0 ? 'Any (no restriction)' : html`<code>${r.list.join(', ')}</code>`,
    },
  ],
})}
<p><a href="${withQuery(NETWORK_POLICIES, { organization: id })}">Change the network policies</a></p>
<h2 id="members-h">Members</h2>
${table({
  caption: 'People of the organization',
  rows: members,
  empty: 'Nobody yet: invite its first owner below.',
  columns: [
    { header: 'Email', cell: (m) => m.email },
    { header: 'Role', cell: (m) => m.role },
    {
      header: 'Status',
      cell: (m) =>
        m.status === 'active' ? (m.twoStep ? 'Active, two-step on' : 'Active') : 'Invited',
    },
    { header: 'Since', cell: (m) => formatTime(m.createdAt) },
  ],
})}
<section class="card" aria-labelledby="invite-h"><h2 id="invite-h">Invite a person</h2>
<p class="muted">You get a one-time link to send them; it sets their password, works once and expires in 72 hours.</p>
${postForm(
  `${ORGANIZATIONS}/${id}/invitations`,
  ctx.csrf,
  html`${field({ name: 'email', label: 'Email', type: 'email', value: invite.email, required: true, maxlength: 254, autocomplete: 'off' })}
${selectField('role', 'Role', ROLE_OPTIONS, invite.role ?? 'owner')}
<button type="submit" class="primary">Create invitation link</button>`,
  { label: 'Invite a person' },
)}</section>`,
    },
    status,
  )
}

/** Organizations (operators): the list, creating one, one organization's page (programs, clients, policies, members) and inviting a person to it. */
export const operatorOrganizationPages: ConsolePage = {
  name: 'operator-organizations',
  register(router) {
    router.get(ORGANIZATIONS, 'operator', (ctx) => organizationsPage(ctx))

    router.post(ORGANIZATIONS, 'operator', async (ctx) => {
      const name = ctx.text('name').trim()
      if (name === '' || name.length > 200)
        return organizationsPage(
          ctx,
          { kind: 'error', text: 'Give the organization a name of 1 to 200 characters.' },
          name,
          422,
        )
      const organization = await createOrganization(
        ctx.deps,
        name,
        audited(
          ctx,
          'organization.created',
          (o) => o.id,
          (o) => o.id,
        ),
      )
      return ctx.redirect(`${ORGANIZATIONS}/${organization.id}`, {
        kind: 'ok',
        text: `${organization.name} is created (${organization.id}).`,
      })
    })

    router.get(`${ORGANIZATIONS}/:id`, 'operator', async (ctx) =>
      organizationPage(ctx, await getOrganization(ctx.deps, param(ctx, 'id'))),
    )

    router.post(`${ORGANIZATIONS}/:id/invitations`, 'operator', async (ctx) => {
      const organization = await getOrganization(ctx.deps, param(ctx, 'id'))
      const email = ctx.text('email').trim()
      const role = ctx.text('role') as MemberRole
      if (!MEMBER_ROLES.includes(role))
        return organizationPage(
          ctx,
          organization,
          { kind: 'error', text: 'Choose a role.' },
          { email },
          422,
        )
      try {
        const invitation = await inviteUser(
          ctx.deps,
          { email, role, organizationId: organization.id },
          ctx.actor(),
          ctx.visitor.address,
        )
        return ctx.render(
          {
            title: 'Invitation link',
            flash: {
              kind: 'ok',
              text: `${invitation.email} is invited to ${organization.name} as ${invitation.role}.`,
            },
            body: html`<p>Send this link to ${invitation.email}. It sets their password, works once, and expires ${formatTime(new Date(invitation.expires_at))}. <strong>It is shown only now.</strong></p>
<p><code class="mono">${invitation.url}</code></p><p><a href="${ORGANIZATIONS}/${organization.id}">Back to ${organization.name}</a></p>`,
          },
          201,
        )
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return organizationPage(ctx, organization, { kind: 'error', text }, { email, role }, 422)
      }
    })
  },
}
