import QRCode from 'qrcode'
import type { FastifyReply } from 'fastify'
import {
  beginTotpEnrolment,
  changePassword,
  confirmTotpEnrolment,
  disableTotp,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  pendingTotpEnrolment,
  recoveryCodesLeft,
  regenerateRecoveryCodes,
  SESSION_ABSOLUTE_MS,
  type TotpEnrolment,
} from '../../users/index.js'
import { field, postForm, type Flash } from '../components.js'
import { html, raw } from '../../../lib/html.js'
import { writeSessionCookie, type ConsolePage, type PageContext } from '../router.js'

const ACCOUNT = '/console/account'

async function accountPage(ctx: PageContext, flash?: Flash, status = 200): Promise<FastifyReply> {
  const user = ctx.session.user
  const left = user.totpEnabled ? await recoveryCodesLeft(ctx.deps, ctx.session) : 0
  const twoStep = user.totpEnabled
    ? html`<p>Two-step verification is <strong>on</strong>. ${left} recovery code${left === 1 ? '' : 's'} left.</p>
${postForm(`${ACCOUNT}/recovery-codes`, ctx.csrf, html`${field({ name: 'password', id: 'rc-password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}<button type="submit" class="secondary">Make new recovery codes</button>`, { label: 'New recovery codes' })}
${postForm(`${ACCOUNT}/two-step/disable`, ctx.csrf, html`${field({ name: 'password', id: 'off-password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}<button type="submit" class="danger">Turn off two-step verification</button>`, { label: 'Turn off two-step verification' })}`
    : html`<p>Two-step verification is <strong>off</strong>. With it on, signing in also asks for a code of an authenticator app.</p>
${postForm(`${ACCOUNT}/two-step`, ctx.csrf, html`<button type="submit" class="primary">Set up two-step verification</button>`)}`
  return ctx.render(
    {
      title: 'Your account',
      flash,
      body: html`<p>${user.email} · ${user.role}</p>
<section class="card" aria-labelledby="pw-h"><h2 id="pw-h">Change your password</h2>
<p class="muted">Changing it signs you out everywhere else.</p>
${postForm(
  `${ACCOUNT}/password`,
  ctx.csrf,
  html`
${field({ name: 'current_password', label: 'Current password', type: 'password', autocomplete: 'current-password', required: true, maxlength: MAX_PASSWORD_LENGTH })}
${field({ name: 'new_password', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD_LENGTH, maxlength: MAX_PASSWORD_LENGTH, hint: `At least ${MIN_PASSWORD_LENGTH} characters; common passwords are refused.` })}
<button type="submit" class="primary">Change password</button>`,
  { label: 'Change your password' },
)}</section>
<section class="card" aria-labelledby="ts-h"><h2 id="ts-h">Two-step verification</h2>${twoStep}</section>`,
    },
    status,
  )
}

async function enrolmentPage(
  ctx: PageContext,
  enrolment: TotpEnrolment,
  error: string | null,
): Promise<FastifyReply> {
  const qr = await QRCode.toString(enrolment.uri, {
    type: 'svg',
    margin: 1,
    errorCorrectionLevel: 'M',
  })
  return ctx.render(
    {
      title: 'Set up two-step verification',
      flash: error ? { kind: 'error', text: error } : null,
      body: html`<ol><li>Scan this code with an authenticator app (or type the key below).</li><li>Enter the 6-digit code it shows.</li></ol>
<figure class="qr" role="img" aria-label="QR code of the two-step verification key">${raw(qr)}</figure>
<p>Key: <code class="mono">${enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}</code></p>
${postForm(`${ACCOUNT}/two-step/confirm`, ctx.csrf, html`${field({ name: 'code', label: 'Code from the app', inputmode: 'numeric', autocomplete: 'one-time-code', required: true, maxlength: 6 })}<button type="submit" class="primary">Turn on</button>`, { label: 'Confirm two-step verification' })}`,
    },
    error ? 422 : 200,
  )
}

function recoveryCodesPage(ctx: PageContext, codes: string[], title: string): FastifyReply {
  return ctx.render({
    title,
    flash: { kind: 'ok', text: 'Two-step verification is on.' },
    body: html`<p><strong>Save these recovery codes now: they are shown only once.</strong> Each one signs you in once if you lose your authenticator.</p>
<ol class="codes">${codes.map((c) => html`<li>${c}</li>`)}</ol>
<p><a href="${ACCOUNT}">Done</a></p>`,
  })
}

/** The signed-in person's own account: password, two-step verification (TOTP) and recovery codes. Any role. */
export const accountPages: ConsolePage = {
  name: 'account',
  register(router) {
    router.get(ACCOUNT, 'account', (ctx) => accountPage(ctx))

    router.post(`${ACCOUNT}/password`, 'account', async (ctx) => {
      const outcome = await changePassword(
        ctx.deps,
        ctx.session,
        { current: ctx.text('current_password'), next: ctx.text('new_password') },
        ctx.visitor,
      )
      if (outcome.kind === 'wrong_password')
        return accountPage(ctx, { kind: 'error', text: 'The current password is not right.' }, 422)
      if (outcome.kind === 'weak')
        return accountPage(ctx, { kind: 'error', text: outcome.message }, 422)
      writeSessionCookie(ctx.reply, ctx.deps, outcome.token, SESSION_ABSOLUTE_MS / 1000)
      return ctx.redirect(ACCOUNT, {
        kind: 'ok',
        text: 'Your password is changed. Every other session of yours has ended.',
      })
    })

    router.post(`${ACCOUNT}/two-step`, 'account', async (ctx) => {
      const enrolment = await beginTotpEnrolment(ctx.deps, ctx.session)
      return enrolment ? enrolmentPage(ctx, enrolment, null) : ctx.redirect(ACCOUNT)
    })

    router.post(`${ACCOUNT}/two-step/confirm`, 'account', async (ctx) => {
      const outcome = await confirmTotpEnrolment(
        ctx.deps,
        ctx.session,
        ctx.text('code'),
        ctx.visitor.address,
      )
      if (outcome.kind === 'enabled')
        return recoveryCodesPage(ctx, outcome.recoveryCodes, 'Your recovery codes')
      const pending =
        outcome.kind === 'wrong_code' ? await pendingTotpEnrolment(ctx.deps, ctx.session) : null
      return pending
        ? enrolmentPage(
            ctx,
            pending,
            'That code is not right. Check the time of your device and try the next code.',
          )
        : ctx.redirect(ACCOUNT)
    })

    router.post(`${ACCOUNT}/two-step/disable`, 'account', async (ctx) => {
      if (!(await disableTotp(ctx.deps, ctx.session, ctx.text('password'), ctx.visitor.address))) {
        return accountPage(ctx, { kind: 'error', text: 'The password is not right.' }, 422)
      }
      return ctx.redirect(ACCOUNT, { kind: 'ok', text: 'Two-step verification is off.' })
    })

    router.post(`${ACCOUNT}/recovery-codes`, 'account', async (ctx) => {
      const codes = await regenerateRecoveryCodes(
        ctx.deps,
        ctx.session,
        ctx.text('password'),
        ctx.visitor.address,
      )
      if (!codes)
        return accountPage(ctx, { kind: 'error', text: 'The password is not right.' }, 422)
      return recoveryCodesPage(ctx, codes, 'Your new recovery codes')
    })
  },
}
