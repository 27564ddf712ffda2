import { randomBytes } from 'node:crypto'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { isApiError } from '../../http/errors.js'
import { clientAddress } from '../../http/ip.js'
import { sameOriginPost } from '../../http/same-origin.js'
import { DRAFT_NOTE, draftRefill, keptFields, takeDraft, writeDraft } from './drafts.js'
import { safeEqual } from '../../lib/crypto.js'
import { getOrganization } from '../oauth/index.js'
import {
  actorOf,
  resolveSession,
  type Actor,
  type ConsoleSession,
  type Visitor,
} from '../users/index.js'
import { allowed, type Area } from './access.js'
import type { Flash } from './components.js'
import {
  clearCookie,
  decodeFlash,
  encodeFlash,
  FLASH_COOKIE,
  newPreSessionCookie,
  parseCookies,
  PRESESSION_COOKIE,
  preSessionToken,
  preSessionValid,
  SESSION_COOKIE,
  writeCookie,
  tokenCookie,
} from './cookies.js'
import { html } from '../../lib/html.js'
import { renderPage, renderPublicPage, type Chrome, type View } from './layout.js'

/** A form as the console parses it: repeated fields (checkboxes) become arrays. */
export type FormBody = Record<string, string | string[]>

/** What every console handler gets: the request, the parsed form, where it comes from and how to answer. */
export interface PublicContext {
  req: FastifyRequest
  reply: FastifyReply
  deps: AppDeps
  form: FormBody
  visitor: Visitor
  /** The token the page's forms carry in `_csrf`. */
  csrf: string
  /** One field of the form as text ('' when absent). */
  text(name: string): string
  /** Answers the page (200 unless `status`), in the signed-in layout when there is a session. */
  render(view: View, status?: number): FastifyReply
  /** 303 to `to` (post/redirect/get), leaving `flash` for the next page. */
  redirect(to: string, flash?: Flash): FastifyReply
}

/** A handler of a signed-in page: the session, and for organization pages the scope (organization, selected environment). */
export interface PageContext extends PublicContext {
  session: ConsoleSession
  /** The organization and the selected environment; null for an operator (no organization). */
  scope: Scope | null
  organizationName: string | null
  /** The audit actor of this request (who, at the request's clock reading). */
  actor(): Actor
}

export type PublicHandler = (ctx: PublicContext) => Promise<FastifyReply> | FastifyReply
export type PageHandler = (ctx: PageContext) => Promise<FastifyReply> | FastifyReply

/**
 * How console pages add routes. Every route names its `area`; the router resolves the session, enforces the
 * role guard (`allowed`), checks the CSRF token of every POST and renders errors as pages, before the handler runs.
 */
export interface ConsoleRouter {
  get(url: string, area: Exclude<Area, 'public'>, handler: PageHandler): void
  /** `bodyLimit`: a form bigger than the usual 16 KiB (a pasted file), in bytes. */
  post(
    url: string,
    area: Exclude<Area, 'public'>,
    handler: PageHandler,
    options?: { bodyLimit?: number },
  ): void
  /** Pages without a session (sign-in, invitations). `noReferrer`: the URL carries a secret. */
  publicGet(url: string, handler: PublicHandler, options?: { noReferrer?: boolean }): void
  publicPost(url: string, handler: PublicHandler, options?: { noReferrer?: boolean }): void
  /** Whether a GET route is registered at `url` (placeholders fill the planned pages that are not). */
  hasGet(url: string): boolean
}

/** One console page (or a few related ones): listed in CONSOLE_PAGES (pages/index.ts). */
export interface ConsolePage {
  name: string
  register(router: ConsoleRouter, deps: AppDeps): void
}

interface ConsoleState {
  nonce: string
  cookies: Map<string, string>
  flash: Flash | null
  session: ConsoleSession | null
  organizationName: string | null
  csrf: string
  /** A form of a signed-in area sent without a live session: answered once its body is read. */
  expired?: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The console area of a route (set by the ConsoleRouter; a console route without one is refused at start-up). */
    consoleArea?: Area
    consoleNoReferrer?: boolean
  }
  interface FastifyRequest {
    consoleState: ConsoleState | null
  }
}

const SAFE_PATH = /^\/console(\/[A-Za-z0-9/_.~%-]*)?(\?[A-Za-z0-9=&_.~%-]*)?$/

/** A path inside the console to go back to, or null (anything else could send the person to another site). */
export function consolePath(value: string | undefined): string | null {
  return value && SAFE_PATH.test(value) && !value.includes('//') ? value : null
}

function secure(deps: AppDeps): boolean {
  return deps.config.baseUrl.startsWith('https:')
}

/** Headers of every console answer: nothing loads from elsewhere, no framing, no caching, no URL leaked in Referer. */
function securityHeaders(reply: FastifyReply, nonce: string, noReferrer: boolean): void {
  reply
    .header(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('Referrer-Policy', noReferrer ? 'no-referrer' : 'same-origin')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin')
    .header('Cache-Control', 'no-store')
}

function chromeOf(req: FastifyRequest, deps: AppDeps): Chrome {
  const state = req.consoleState
  return {
    nonce: state?.nonce ?? randomBytes(16).toString('base64'),
    path: req.url.split('?')[0],
    csrf: state?.csrf ?? '',
    flash: state?.flash ?? null,
    user: state?.session?.user ?? null,
    organizationName: state?.organizationName ?? null,
    environment:
      state?.session && state.session.user.role !== 'operator' ? state.session.environment : null,
    environments: deps.config.environments,
    releases: deps.config.releases,
  }
}

/** Sends a page: the signed-in layout when the request has a session, else the public one. */
export function sendPage(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
  view: View,
  status = 200,
): FastifyReply {
  const chrome = chromeOf(req, deps)
  if (req.consoleState?.flash) clearCookie(reply, FLASH_COOKIE, { secure: secure(deps) })
  const draft =
    chrome.user && req.consoleState
      ? takeDraft(req, reply, req.consoleState.cookies, deps.config.masterKey, secure(deps))
      : null
  const shown = draft
    ? { ...view, body: html`${DRAFT_NOTE}${view.body}${draftRefill(chrome.nonce, draft)}` }
    : view
  const page = chrome.user ? renderPage(chrome, shown) : renderPublicPage(chrome, shown)
  return reply.code(status).type('text/html; charset=utf-8').send(page)
}

/** A refusal or failure as a page (403, 404, 429, 500…): the text is public, no detail of the cause. */
export function sendMessage(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
  status: number,
  title: string,
  text: string,
): FastifyReply {
  return sendPage(
    req,
    reply,
    deps,
    {
      title,
      body: html`<p>${text}</p><p><a href="/console">Back to the console</a></p>`,
      flash: null,
    },
    status,
  )
}

/** Leaves a message for the next page (signed, read once). */
export function leaveFlash(reply: FastifyReply, deps: AppDeps, flash: Flash): void {
  writeCookie(reply, FLASH_COOKIE, encodeFlash(deps.config.masterKey, flash), {
    maxAgeSeconds: 120,
    secure: secure(deps),
  })
}

/** The session cookie: HttpOnly, SameSite=Lax, Path=/console, Secure on https, for at most the absolute lifetime. */
export function writeSessionCookie(
  reply: FastifyReply,
  deps: AppDeps,
  token: string,
  maxAgeSeconds: number,
): void {
  writeCookie(reply, SESSION_COOKIE, token, { maxAgeSeconds, secure: secure(deps) })
}

export function clearSessionCookie(reply: FastifyReply, deps: AppDeps): void {
  clearCookie(reply, SESSION_COOKIE, { secure: secure(deps) })
}

function text(form: FormBody, name: string): string {
  const value = form[name]
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '')
}

function baseContext(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): PublicContext {
  const form = (req.body && typeof req.body === 'object' ? req.body : {}) as FormBody
  return {
    req,
    reply,
    deps,
    form,
    visitor: { address: clientAddress(req), userAgent: String(req.headers['user-agent'] ?? '') },
    csrf: req.consoleState!.csrf,
    text: (name) => text(form, name),
    render: (view, status) => sendPage(req, reply, deps, view, status),
    redirect: (to, flash) => {
      if (flash) leaveFlash(reply, deps, flash)
      return reply.redirect(to, 303)
    },
  }
}

/**
 * The gate of every console route, before the body is read: security headers, the flash message, then for a
 * signed-in area the session (none or expired → the sign-in page) and the role guard (→ 403).
 */
async function gate(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
): Promise<FastifyReply | undefined> {
  const config = req.routeOptions.config
  const area = config.consoleArea!
  const nonce = randomBytes(16).toString('base64')
  securityHeaders(reply, nonce, config.consoleNoReferrer === true)
  const cookies = parseCookies(req.headers.cookie)
  const state: ConsoleState = {
    nonce,
    cookies,
    flash:
      req.method === 'GET' ? decodeFlash(deps.config.masterKey, cookies.get(FLASH_COOKIE)) : null,
    session: null,
    organizationName: null,
    csrf: '',
  }
  req.consoleState = state
  if (area === 'public') {
    let cookie = tokenCookie(cookies, PRESESSION_COOKIE)
    if (!cookie && req.method === 'GET') {
      cookie = newPreSessionCookie()
      writeCookie(reply, PRESESSION_COOKIE, cookie, {
        sameSite: 'Strict',
        maxAgeSeconds: 12 * 60 * 60,
        secure: secure(deps),
      })
    }
    state.csrf = cookie ? preSessionToken(deps.config.masterKey, cookie) : ''
    return undefined
  }
  const token = tokenCookie(cookies, SESSION_COOKIE)
  const session = token ? await resolveSession(deps, token) : null
  if (!session) {
    if (cookies.has(SESSION_COOKIE)) {
      clearSessionCookie(reply, deps)
      leaveFlash(reply, deps, { kind: 'info', text: 'Your session has ended. Sign in again.' })
    }
    if (req.method === 'POST') {
      state.expired = true
      return undefined
    }
    const next = consolePath(req.url)
    return reply.redirect(
      next && next !== '/console'
        ? `/console/sign-in?next=${encodeURIComponent(next)}`
        : '/console/sign-in',
      303,
    )
  }
  state.session = session
  state.csrf = session.csrfSecret
  if (session.user.organizationId)
    state.organizationName = (await getOrganization(deps, session.user.organizationId)).name
  if (!allowed(session.user.role, area, req.method)) {
    const text =
      session.user.role === 'operator'
        ? "This page belongs to an organization's console; platform operators use the operator pages."
        : req.method === 'GET'
          ? 'Your role does not give access to this page.'
          : 'Your role does not allow this change. Ask an owner of your organization.'
    return sendMessage(req, reply, deps, 403, 'Not allowed', text)
  }
  return undefined
}

/** The console page a request came from, by its Referer of this host (as `sameOriginPost` judges); else null. */
function refererPath(req: FastifyRequest, baseUrl: string): string | null {
  try {
    const from = new URL(String(req.headers.referer ?? ''))
    const ours = from.host === req.headers.host || from.origin === new URL(baseUrl).origin
    return ours ? consolePath(from.pathname + from.search) : null
  } catch {
    return null
  }
}

/**
 * A form sent after the session ended: to the sign-in, then back to the page the person was on (the form's
 * `return_to`, else the page it was sent from) with what they typed kept as a draft (not secrets). Only a form
 * sent from a page of this console (a same-origin Referer, no other site's Origin) keeps anything.
 */
function expiredForm(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): FastifyReply {
  const form = (req.body && typeof req.body === 'object' ? req.body : {}) as FormBody
  // Sent from a page of this console (its Referer, which Referrer-Policy same-origin keeps) and not from elsewhere.
  const from = sameOriginPost(req, deps.config.baseUrl)
    ? refererPath(req, deps.config.baseUrl)
    : null
  const back = from ? (consolePath(text(form, 'return_to')) ?? from) : null
  const fields = back ? keptFields(form) : []
  if (back && fields.length > 0)
    writeDraft(
      reply,
      deps.config.masterKey,
      { page: back, action: req.url.split('?')[0], fields },
      secure(deps),
    )
  return reply.redirect(
    back && back !== '/console'
      ? `/console/sign-in?next=${encodeURIComponent(back)}`
      : '/console/sign-in',
    303,
  )
}

/** Every POST carries the form token of its session (or, without one, of its pre-session cookie), compared in constant time. */
async function csrfCheck(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: AppDeps,
): Promise<FastifyReply | undefined> {
  if (req.method !== 'POST') return undefined
  const state = req.consoleState!
  if (state.expired) return expiredForm(req, reply, deps)
  const given = text((req.body ?? {}) as FormBody, '_csrf')
  const valid = state.session
    ? given !== '' && safeEqual(given, state.session.csrfSecret)
    : preSessionValid(deps.config.masterKey, tokenCookie(state.cookies, PRESESSION_COOKIE), given)
  if (valid && sameOriginPost(req, deps.config.baseUrl)) return undefined
  return sendMessage(
    req,
    reply,
    deps,
    403,
    'This form could not be sent',
    'The form has expired or did not come from this console (it must carry its security token, and your browser must accept cookies). Go back, reload the page and try again; nothing was changed.',
  )
}

/**
 * Parses url-encoded forms only (16 KiB at most, unless the route allows more: a pasted file); any other body is an
 * empty form, which then fails the CSRF check.
 */
function installFormParsing(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_req, body, done) => {
      const form: FormBody = Object.create(null)
      for (const [key, value] of new URLSearchParams(body as string)) {
        const previous = form[key]
        form[key] =
          previous === undefined
            ? value
            : Array.isArray(previous)
              ? [...previous, value]
              : [previous, value]
      }
      done(null, form)
    },
  )
  scope.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: 16 * 1024 },
    (_req, _body, done) => done(null, {}),
  )
}

function errorHandler(deps: AppDeps) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const e = err as FastifyError
    if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return sendMessage(
        req,
        reply,
        deps,
        413,
        'Too much data',
        'The form sent more than this page accepts.',
      )
    if (isApiError(err) && err.status < 500)
      return sendMessage(req, reply, deps, err.status, 'This did not work', err.message)
    req.log.error({ err }, 'console page failed')
    return sendMessage(
      req,
      reply,
      deps,
      500,
      'Something went wrong',
      'Something went wrong on our side. Try again in a moment.',
    )
  }
}

/**
 * Mounts the console: one encapsulated scope whose hooks (gate, CSRF, form parsing, error pages) apply to every
 * route registered through the router it hands to `pages`. A route added to the scope any other way, or
 * without an area, stops the start-up.
 */
export async function mountConsole(
  app: FastifyInstance,
  deps: AppDeps,
  pages: readonly ConsolePage[],
  finish: (router: ConsoleRouter) => void,
): Promise<void> {
  await app.register(async (scope) => {
    installFormParsing(scope)
    scope.decorateRequest('consoleState', null)
    scope.addHook('onRoute', (route) => {
      if (!route.config?.consoleArea)
        throw new Error(
          `console route ${String(route.method)} ${route.url} has no area: add it through the ConsoleRouter`,
        )
    })
    scope.addHook('onRequest', (req, reply) => gate(req, reply, deps))
    scope.addHook('preHandler', (req, reply) => csrfCheck(req, reply, deps))
    scope.setErrorHandler(errorHandler(deps))

    const gets = new Set<string>()
    const add = (
      method: 'GET' | 'POST',
      url: string,
      area: Area,
      noReferrer: boolean,
      handler: (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | FastifyReply,
      bodyLimit?: number,
    ) => {
      if (method === 'GET') gets.add(url)
      scope.route({
        method,
        url,
        config: { consoleArea: area, consoleNoReferrer: noReferrer },
        schema: { hide: true },
        handler,
        ...(bodyLimit ? { bodyLimit } : {}),
      })
    }
    const signedIn =
      (area: Exclude<Area, 'public'>, handler: PageHandler) =>
      (req: FastifyRequest, reply: FastifyReply) => {
        const state = req.consoleState!
        const session = state.session!
        const scopeOf = session.user.organizationId
          ? { organizationId: session.user.organizationId, environment: session.environment }
          : null
        return handler({
          ...baseContext(req, reply, deps),
          session,
          scope: scopeOf,
          organizationName: state.organizationName,
          actor: () => actorOf(session, deps.clock.now()),
        })
      }
    const router: ConsoleRouter = {
      get: (url, area, handler) => add('GET', url, area, false, signedIn(area, handler)),
      post: (url, area, handler, o) =>
        add('POST', url, area, false, signedIn(area, handler), o?.bodyLimit),
      publicGet: (url, handler, o) =>
        add('GET', url, 'public', o?.noReferrer === true, (req, reply) =>
          handler(baseContext(req, reply, deps)),
        ),
      publicPost: (url, handler, o) =>
        add('POST', url, 'public', o?.noReferrer === true, (req, reply) =>
          handler(baseContext(req, reply, deps)),
        ),
      hasGet: (url) => gets.has(url),
    }
    for (const page of pages) page.register(router, deps)
    finish(router)
  })
}
