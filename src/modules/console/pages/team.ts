import type { FastifyReply } from 'fastify'
import { isApiError } from '../../../http/errors.js'
import { inviteTeammate, listTeam, MEMBER_ROLES, type MemberRole } from '../../users/index.js'
import { field, formatTime, postForm, selectField, table, type Flash } from '../components.js'
import { html } from '../html.js'
import type { ConsolePage, PageContext } from '../router.js'

const TEAM = '/console/team'
const ROLE_OPTIONS: [string, string][] = [['developer', 'Developer: everything but the team'], ['viewer', 'Viewer: read only'], ['owner', 'Owner: everything, team included']]

async function teamPage(ctx: PageContext, flash?: Flash, form: { email?: string; role?: string } = {}, status = 200): Promise<FastifyReply> {
  const members = await listTeam(ctx.deps, ctx.scope!.organizationId)
  return ctx.render({
    title: 'Team',
    flash,
    body: html`${table({
      caption: 'Members',
      rows: members,
      empty: 'No members yet.',
      columns: [
        { header: 'Email', cell: (m) => m.email },
        { header: 'Role', cell: (m) => m.role },
        { header: 'Status', cell: (m) => (m.status === 'active' ? (m.twoStep ? 'Active, two-step on' : 'Active') : 'Invited') },
        { header: 'Since', cell: (m) => formatTime(m.createdAt) },
      ],
    })}
<section class="card" aria-labelledby="invite-h"><h2 id="invite-h">Invite a teammate</h2>
<p class="muted">You get a one-time link to send them; it works for 72 hours.</p>
${postForm(`${TEAM}/invitations`, ctx.csrf, html`${field({ name: 'email', label: 'Email', type: 'email', value: form.email, required: true, maxlength: 254 })}
${selectField('role', 'Role', ROLE_OPTIONS, form.role ?? 'developer')}
<button type="submit" class="primary">Create invitation link</button>`, { label: 'Invite a teammate' })}</section>`,
  }, status)
}

/** Team (owners): the members of the organization, and inviting one (the link is shown once). */
export const teamPages: ConsolePage = {
  name: 'team',
  register(router) {
    router.get(TEAM, 'team', (ctx) => teamPage(ctx))

    router.post(`${TEAM}/invitations`, 'team', async (ctx) => {
      const email = ctx.text('email')
      const role = ctx.text('role') as MemberRole
      if (!MEMBER_ROLES.includes(role)) return teamPage(ctx, { kind: 'error', text: 'Choose a role.' }, { email }, 422)
      try {
        const owner = { ...ctx.actor(), organizationId: ctx.scope!.organizationId }
        const invitation = await inviteTeammate(ctx.deps, owner, { email, role }, ctx.visitor.address)
        return ctx.render({
          title: 'Invitation link',
          flash: { kind: 'ok', text: `${invitation.email} is invited as ${invitation.role}.` },
          body: html`<p>Send this link to ${invitation.email}. It sets their password, works once, and expires ${formatTime(new Date(invitation.expires_at))}. It is shown only now.</p>
<p><code class="mono">${invitation.url}</code></p><p><a href="${TEAM}">Back to the team</a></p>`,
        }, 201)
      } catch (err) {
        if (isApiError(err) && err.status < 500) return teamPage(ctx, { kind: 'error', text: err.message }, { email, role }, 422)
        throw err
      }
    })
  },
}
