import type { FastifyReply } from 'fastify'
import { isApiError } from '../../../http/errors.js'
import {
  changeMemberRole,
  inviteTeammate,
  listTeam,
  MEMBER_ROLES,
  removeMember,
  type Member,
  type MemberRole,
} from '../../users/index.js'
import { field, formatTime, postForm, selectField, table, type Flash } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'

const TEAM = '/console/team'
const ROLE_OPTIONS: [string, string][] = [
  ['developer', 'Developer: everything but the team'],
  ['viewer', 'Viewer: read only'],
  ['owner', 'Owner: everything, team included'],
]
const ROLE_NAMES: [string, string][] = [
  ['owner', 'Owner'],
  ['developer', 'Developer'],
  ['viewer', 'Viewer'],
]

function owner(ctx: PageContext) {
  return { ...ctx.actor(), organizationId: ctx.scope!.organizationId }
}

/** One member's actions: a role choice, and a link to the confirmation page that removes them (or revokes their invitation). */
function memberActions(ctx: PageContext, m: Member) {
  const pending = m.status === 'invited'
  return html`<div class="row-actions">${postForm(
    `${TEAM}/members/${m.id}/role`,
    ctx.csrf,
    html`${selectField('role', `Role of ${m.email}`, ROLE_NAMES, m.role, { id: `role-${m.id}`, hideLabel: true })}
<button type="submit" aria-label="Change role of ${m.email}">Change role</button>`,
    { class: 'inline', label: `Role of ${m.email}` },
  )}
<a href="${TEAM}/members/${m.id}/remove" aria-label="${pending ? 'Revoke invitation of' : 'Remove'} ${m.email}">${pending ? 'Revoke invitation' : 'Remove'}</a></div>`
}

async function teamPage(
  ctx: PageContext,
  flash?: Flash,
  form: { email?: string; role?: string } = {},
  status = 200,
): Promise<FastifyReply> {
  const members = await listTeam(ctx.deps, ctx.scope!.organizationId)
  return ctx.render(
    {
      title: 'Team',
      flash,
      body: html`${table({
        caption: 'Members',
        rows: members,
        empty: 'No members yet.',
        columns: [
          {
            header: 'Email',
            cell: (m) =>
              html`${m.email}${m.id === ctx.session.user.id ? html` <span class="muted">(you)</span>` : ''}`,
          },
          { header: 'Role', cell: (m) => m.role },
          {
            header: 'Status',
            cell: (m) =>
              m.status === 'active' ? (m.twoStep ? 'Active, two-step on' : 'Active') : 'Invited',
          },
          { header: 'Since', cell: (m) => formatTime(m.createdAt) },
          { header: 'Actions', cell: (m) => memberActions(ctx, m) },
        ],
      })}
<section class="card" aria-labelledby="invite-h"><h2 id="invite-h">Invite a teammate</h2>
<p class="muted">You get a one-time link to send them; it works for 72 hours.</p>
${postForm(
  `${TEAM}/invitations`,
  ctx.csrf,
  html`${field({ name: 'email', label: 'Email', type: 'email', value: form.email, required: true, maxlength: 254 })}
${selectField('role', 'Role', ROLE_OPTIONS, form.role ?? 'developer')}
<button type="submit" class="primary">Create invitation link</button>`,
  { label: 'Invite a teammate' },
)}</section>`,
    },
    status,
  )
}

/** The member a `/members/:id/…` address names, from the organization's own team (another's id is a 404 page). */
async function memberOf(ctx: PageContext): Promise<Member | null> {
  const id = (ctx.req.params as { id: string }).id
  return (await listTeam(ctx.deps, ctx.scope!.organizationId)).find((m) => m.id === id) ?? null
}

function notAMember(ctx: PageContext): FastifyReply {
  return ctx.render(
    {
      title: 'Not found',
      body: html`<p>No member of your organization has this id.</p><p><a href="${TEAM}">Back to the team</a></p>`,
    },
    404,
  )
}

/** Runs a team change; a refusal (the last owner, an unknown member) comes back as the team page's error. */
async function change(ctx: PageContext, run: () => Promise<Flash>): Promise<FastifyReply> {
  try {
    return ctx.redirect(TEAM, await run())
  } catch (err) {
    if (isApiError(err) && err.status < 500)
      return teamPage(ctx, { kind: 'error', text: err.message }, {}, err.status === 404 ? 404 : 422)
    throw err
  }
}

/** Team (owners): the members of the organization, inviting one (the link is shown once), roles, removal and revoking invitations. */
export const teamPages: ConsolePage = {
  name: 'team',
  register(router) {
    router.get(TEAM, 'team', (ctx) => teamPage(ctx))

    router.post(`${TEAM}/invitations`, 'team', async (ctx) => {
      const email = ctx.text('email')
      const role = ctx.text('role') as MemberRole
      if (!MEMBER_ROLES.includes(role))
        return teamPage(ctx, { kind: 'error', text: 'Choose a role.' }, { email }, 422)
      try {
        const invitation = await inviteTeammate(
          ctx.deps,
          owner(ctx),
          { email, role },
          ctx.visitor.address,
        )
        return ctx.render(
          {
            title: 'Invitation link',
            flash: { kind: 'ok', text: `${invitation.email} is invited as ${invitation.role}.` },
            body: html`<p>Send this link to ${invitation.email}. It sets their password, works once, and expires ${formatTime(new Date(invitation.expires_at))}. It is shown only now.</p>
<p><code class="mono">${invitation.url}</code></p><p><a href="${TEAM}">Back to the team</a></p>`,
          },
          201,
        )
      } catch (err) {
        if (isApiError(err) && err.status < 500)
          return teamPage(ctx, { kind: 'error', text: err.message }, { email, role }, 422)
        throw err
      }
    })

    router.post(`${TEAM}/members/:id/role`, 'team', async (ctx) => {
      const member = await memberOf(ctx)
      if (!member) return notAMember(ctx)
      const role = ctx.text('role') as MemberRole
      return change(ctx, async () => {
        await changeMemberRole(ctx.deps, owner(ctx), member.id, role, ctx.visitor.address)
        return { kind: 'ok', text: `${member.email} is now ${role}.` }
      })
    })

    router.get(`${TEAM}/members/:id/remove`, 'team', async (ctx) => {
      const member = await memberOf(ctx)
      if (!member) return notAMember(ctx)
      const pending = member.status === 'invited'
      const self = member.id === ctx.session.user.id
      return ctx.render({
        title: pending ? 'Revoke the invitation' : 'Remove a member',
        body: html`<p>${
          pending
            ? html`The invitation link sent to ${member.email} stops working, and they leave the team list.`
            : html`${member.email} (${member.role}) loses access to the console at once: every session of theirs ends. What they did stays in the audit log.`
        }${self ? html` <strong>This is you: you will be signed out.</strong>` : ''}</p>
${postForm(`${TEAM}/members/${member.id}/remove`, ctx.csrf, html`<button type="submit" class="danger">${pending ? 'Revoke the invitation' : `Remove ${member.email}`}</button> <a href="${TEAM}">Cancel</a>`, { label: pending ? 'Confirm revoking the invitation' : 'Confirm removing the member' })}`,
      })
    })

    router.post(`${TEAM}/members/:id/remove`, 'team', async (ctx) => {
      const member = await memberOf(ctx)
      if (!member) return notAMember(ctx)
      return change(ctx, async () => {
        const outcome = await removeMember(ctx.deps, owner(ctx), member.id, ctx.visitor.address)
        return {
          kind: 'ok',
          text:
            outcome === 'revoked'
              ? `The invitation of ${member.email} is revoked.`
              : `${member.email} is removed from the team.`,
        }
      })
    })
  },
}
