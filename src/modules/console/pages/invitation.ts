import type { FastifyReply } from 'fastify'
import {
  acceptInvitation,
  findInvitation,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  SESSION_ABSOLUTE_MS,
} from '../../users/index.js'
import { field, postForm } from '../components.js'
import { html } from '../../../lib/html.js'
import { sendMessage, writeSessionCookie, type ConsolePage, type PublicContext } from '../router.js'

const ROLE_TEXT: Record<string, string> = {
  owner: 'an owner',
  developer: 'a developer',
  viewer: 'a viewer',
  operator: 'a platform operator',
}

function deadLink(ctx: PublicContext): FastifyReply {
  return sendMessage(
    ctx.req,
    ctx.reply,
    ctx.deps,
    404,
    'This link does not work',
    'Invitation links work once, for 72 hours. This one is unknown, expired or already used: ask whoever invited you for a new one, or sign in if you already set your password.',
  )
}

function passwordForm(
  ctx: PublicContext,
  invited: { email: string; role: string },
  error: string | null,
  status: number,
): FastifyReply {
  const token = (ctx.req.params as { token: string }).token
  return ctx.render(
    {
      title: 'Set your password',
      flash: error ? { kind: 'error', text: error } : undefined,
      body: html`<p>You are invited to the svc console as ${ROLE_TEXT[invited.role] ?? invited.role}.</p>
<div class="card">${postForm(
        `/console/invitations/${token}`,
        ctx.csrf,
        html`
${field({ name: 'email', label: 'Email', type: 'email', value: invited.email, autocomplete: 'username', readonly: true })}
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD_LENGTH, maxlength: MAX_PASSWORD_LENGTH, hint: `At least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make a good one; common passwords are refused.` })}
${field({ name: 'password_confirmation', label: 'Repeat the password', type: 'password', autocomplete: 'new-password', required: true, maxlength: MAX_PASSWORD_LENGTH })}
<button type="submit" class="primary">Set password and sign in</button>`,
        { label: 'Set your password' },
      )}</div>`,
    },
    status,
  )
}

/** The one-time invitation link: shows who it is for and sets the password, then signs the person in. */
export const invitationPages: ConsolePage = {
  name: 'invitations',
  register(router) {
    // The URL carries the token: no Referer leaves these pages.
    router.publicGet(
      '/console/invitations/:token',
      async (ctx) => {
        const invited = await findInvitation(ctx.deps, (ctx.req.params as { token: string }).token)
        return invited ? passwordForm(ctx, invited, null, 200) : deadLink(ctx)
      },
      { noReferrer: true },
    )

    router.publicPost(
      '/console/invitations/:token',
      async (ctx) => {
        const token = (ctx.req.params as { token: string }).token
        const invited = await findInvitation(ctx.deps, token)
        if (!invited) return deadLink(ctx)
        const password = ctx.text('password')
        if (password !== ctx.text('password_confirmation'))
          return passwordForm(ctx, invited, 'The two passwords differ.', 422)
        const outcome = await acceptInvitation(ctx.deps, token, password, ctx.visitor)
        if (outcome.kind === 'invalid') return deadLink(ctx)
        if (outcome.kind === 'weak') return passwordForm(ctx, invited, outcome.message, 422)
        writeSessionCookie(ctx.reply, ctx.deps, outcome.token, SESSION_ABSOLUTE_MS / 1000)
        return ctx.redirect('/console', {
          kind: 'ok',
          text: 'Your password is set and you are signed in.',
        })
      },
      { noReferrer: true },
    )
  },
}
