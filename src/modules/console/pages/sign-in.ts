import type { FastifyReply } from 'fastify'
import {
  completeSecondFactor,
  findSecondFactorSession,
  MAX_PASSWORD_LENGTH,
  SECOND_FACTOR_MS,
  SESSION_ABSOLUTE_MS,
  signIn,
  signOut,
  switchEnvironment,
  type SignInOutcome,
} from '../../users/index.js'
import { field, postForm } from '../components.js'
import { clearCookie, PENDING_COOKIE, parseCookies, writeCookie, tokenCookie } from '../cookies.js'
import { html } from '../../../lib/html.js'
import {
  clearSessionCookie,
  consolePath,
  sendMessage,
  writeSessionCookie,
  type ConsolePage,
  type PublicContext,
} from '../router.js'

const SIGN_IN_PATH = '/console/sign-in'
const VERIFY_PATH = '/console/sign-in/verify'

function signInForm(
  ctx: PublicContext,
  email: string,
  next: string | null,
  error: string | null,
  status: number,
): FastifyReply {
  return ctx.render(
    {
      title: 'Sign in',
      flash: error ? { kind: 'error', text: error } : undefined,
      body: html`<div class="card">${postForm(
        SIGN_IN_PATH,
        ctx.csrf,
        html`
${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
${field({ name: 'email', label: 'Email', type: 'email', value: email, autocomplete: 'username', required: true, maxlength: 320 })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true, maxlength: MAX_PASSWORD_LENGTH })}
<button type="submit" class="primary">Sign in</button>`,
        { label: 'Sign in' },
      )}</div>
<p class="muted">No password yet? Use the invitation link you were sent.</p>`,
    },
    status,
  )
}

function verifyForm(ctx: PublicContext, error: string | null, status: number): FastifyReply {
  return ctx.render(
    {
      title: 'Two-step verification',
      flash: error ? { kind: 'error', text: error } : undefined,
      body: html`<div class="card">${postForm(
        VERIFY_PATH,
        ctx.csrf,
        html`
${field({ name: 'code', label: 'Authentication code', hint: 'The 6-digit code of your authenticator app, or one of your recovery codes.', autocomplete: 'one-time-code', required: true, maxlength: 20 })}
<button type="submit" class="primary">Verify</button>`,
        { label: 'Two-step verification' },
      )}</div>
<p><a href="${SIGN_IN_PATH}">Start again</a></p>`,
    },
    status,
  )
}

const inMinutes = (seconds: number) => {
  const minutes = Math.ceil(seconds / 60)
  return `${minutes} minute${minutes === 1 ? '' : 's'}`
}

function rateLimited(ctx: PublicContext, seconds: number): FastifyReply {
  ctx.reply.header('Retry-After', String(seconds))
  return sendMessage(
    ctx.req,
    ctx.reply,
    ctx.deps,
    429,
    'Too many attempts',
    `Too many failed sign-ins for this account or from this network. Try again in ${inMinutes(seconds)}.`,
  )
}

/** The wrong code that locked the code step: the pending sign-in is over (its cookie goes too). */
function codeStepLocked(ctx: PublicContext, seconds: number): FastifyReply {
  clearCookie(ctx.reply, PENDING_COOKIE, { path: SIGN_IN_PATH, secure: secure(ctx) })
  ctx.reply.header('Retry-After', String(seconds))
  return sendMessage(
    ctx.req,
    ctx.reply,
    ctx.deps,
    429,
    'Too many attempts',
    `That code is not right, and too many wrong codes were entered for this account: two-step verification is locked. ` +
      `Sign in again in ${inMinutes(seconds)}.`,
  )
}

/** Where a finished sign-in lands: the page the person was sent away from, or home. */
function signedIn(
  ctx: PublicContext,
  outcome: Extract<SignInOutcome, { kind: 'signed_in' }>,
  next: string | null,
): FastifyReply {
  writeSessionCookie(ctx.reply, ctx.deps, outcome.token, SESSION_ABSOLUTE_MS / 1000)
  return ctx.redirect(next ?? '/console')
}

const secure = (ctx: PublicContext) => ctx.deps.config.baseUrl.startsWith('https:')

/** Sign-in (password, then the TOTP code when enabled), sign-out and the environment switch. */
export const signInPages: ConsolePage = {
  name: 'sign-in',
  register(router) {
    router.publicGet(SIGN_IN_PATH, (ctx) => {
      const next = consolePath((ctx.req.query as Record<string, string | undefined>).next)
      return signInForm(ctx, '', next, null, 200)
    })

    router.publicPost(SIGN_IN_PATH, async (ctx) => {
      const email = ctx.text('email').slice(0, 320)
      const next = consolePath(ctx.text('next'))
      const outcome = await signIn(ctx.deps, { email, password: ctx.text('password') }, ctx.visitor)
      switch (outcome.kind) {
        case 'rate_limited':
          return rateLimited(ctx, outcome.retryAfterSeconds)
        // One answer for an unknown email and a wrong password: same page, same status.
        case 'refused':
          return signInForm(ctx, email, next, 'The email or the password is not right.', 401)
        case 'second_factor':
          writeCookie(ctx.reply, PENDING_COOKIE, outcome.token, {
            path: SIGN_IN_PATH,
            maxAgeSeconds: SECOND_FACTOR_MS / 1000,
            secure: secure(ctx),
          })
          return ctx.redirect(
            next ? `${VERIFY_PATH}?next=${encodeURIComponent(next)}` : VERIFY_PATH,
          )
        case 'signed_in':
          return signedIn(ctx, outcome, next)
      }
    })

    router.publicGet(VERIFY_PATH, async (ctx) => {
      const pending = tokenCookie(parseCookies(ctx.req.headers.cookie), PENDING_COOKIE)
      if (!pending || !(await findSecondFactorSession(ctx.deps, pending)))
        return ctx.redirect(SIGN_IN_PATH)
      return verifyForm(ctx, null, 200)
    })

    router.publicPost(VERIFY_PATH, async (ctx) => {
      const pending = tokenCookie(parseCookies(ctx.req.headers.cookie), PENDING_COOKIE)
      const outcome = pending
        ? await completeSecondFactor(ctx.deps, pending, ctx.text('code'), ctx.visitor)
        : { kind: 'expired' as const }
      switch (outcome.kind) {
        case 'expired':
          return ctx.redirect(SIGN_IN_PATH, {
            kind: 'info',
            text: 'The sign-in took too long. Enter your email and password again.',
          })
        case 'rate_limited':
          return rateLimited(ctx, outcome.retryAfterSeconds)
        case 'locked':
          return codeStepLocked(ctx, outcome.retryAfterSeconds)
        case 'refused':
        case 'second_factor':
          return verifyForm(ctx, 'That code is not right, or was already used.', 401)
        case 'signed_in':
          clearCookie(ctx.reply, PENDING_COOKIE, { path: SIGN_IN_PATH, secure: secure(ctx) })
          return signedIn(
            ctx,
            outcome,
            consolePath((ctx.req.query as Record<string, string | undefined>).next),
          )
      }
    })

    router.post('/console/sign-out', 'account', async (ctx) => {
      await signOut(ctx.deps, ctx.session, ctx.visitor.address)
      clearSessionCookie(ctx.reply, ctx.deps)
      return ctx.redirect(SIGN_IN_PATH, {
        kind: 'ok',
        text: 'You are signed out (on every device).',
      })
    })

    router.post('/console/environment', 'account', async (ctx) => {
      const back = consolePath(ctx.text('return_to')) ?? '/console'
      if (!(await switchEnvironment(ctx.deps, ctx.session, ctx.text('environment')))) {
        return ctx.redirect(back, {
          kind: 'error',
          text: 'This deployment does not serve that environment.',
        })
      }
      return ctx.redirect(back)
    })
  },
}
