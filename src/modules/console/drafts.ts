import type { FastifyReply, FastifyRequest } from 'fastify'
import { deriveKey, hmacSha256, safeEqual } from '../../lib/crypto.js'
import { html, raw, type Html } from '../../lib/html.js'
import { clearCookie, writeCookie } from './cookies.js'

/**
 * What was typed into a console form sent after the session had ended: kept for the sign-in, then filled in
 * again on the page the person was on. A signed, HttpOnly cookie of this console (15 minutes, read once), holding
 * only non-secret fields: never a password, a code, a key, a token or the form's own security fields.
 */

export const DRAFT_COOKIE = 'svc_draft'
const DRAFT_SECONDS = 15 * 60
/** The most a draft may weigh (before signing and base64): a cookie holds about 4 KiB. */
const MAX_DRAFT_BYTES = 2_400

/** Names of fields never kept: secrets, one-time codes, and the form's own machinery. */
const NOT_KEPT = /pass|secret|token|code|pin|cvc|cvv|otp|recovery|key|jwk|pem|^_|^return_to$/i

export interface Draft {
  /** The console page the form was on (a same-origin path of the console). */
  page: string
  /** The path the form is sent to: the form of the page to fill. */
  action: string
  fields: [name: string, values: string[]][]
}

function mac(masterKey: Buffer, payload: string): string {
  return hmacSha256(deriveKey(masterKey, 'console-draft'), payload).toString('base64url')
}

/** The fields of a form worth keeping: non-secret names, text values, as many as fit the cookie. */
export function keptFields(form: Record<string, string | string[]>): Draft['fields'] {
  const fields: Draft['fields'] = []
  let size = 0
  for (const [name, value] of Object.entries(form)) {
    if (NOT_KEPT.test(name) || name.length > 100) continue
    const values = (Array.isArray(value) ? value : [value]).filter((v) => typeof v === 'string')
    const weight = JSON.stringify([name, values]).length
    if (values.length === 0 || size + weight > MAX_DRAFT_BYTES) continue
    size += weight
    fields.push([name, values])
  }
  return fields
}

export function writeDraft(
  reply: FastifyReply,
  masterKey: Buffer,
  draft: Draft,
  secure: boolean,
): void {
  const payload = Buffer.from(JSON.stringify(draft)).toString('base64url')
  writeCookie(reply, DRAFT_COOKIE, `${payload}.${mac(masterKey, payload)}`, {
    maxAgeSeconds: DRAFT_SECONDS,
    secure,
  })
}

function readDraft(masterKey: Buffer, value: string | undefined): Draft | null {
  if (!value) return null
  const [payload, signature] = value.split('.')
  if (!payload || !signature || !safeEqual(signature, mac(masterKey, payload))) return null
  try {
    const draft = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Draft
    return typeof draft.page === 'string' &&
      typeof draft.action === 'string' &&
      Array.isArray(draft.fields)
      ? draft
      : null
  } catch {
    return null
  }
}

/** The draft kept for the page this GET shows, read once (its cookie goes); null when there is none. */
export function takeDraft(
  req: FastifyRequest,
  reply: FastifyReply,
  cookies: Map<string, string>,
  masterKey: Buffer,
  secure: boolean,
): Draft | null {
  if (req.method !== 'GET' || !cookies.has(DRAFT_COOKIE)) return null
  const draft = readDraft(masterKey, cookies.get(DRAFT_COOKIE))
  if (draft && draft.page !== req.url) return null
  clearCookie(reply, DRAFT_COOKIE, { secure })
  return draft
}

/** Says above the page that what was typed is back. */
export const DRAFT_NOTE = html`<div class="flash info" role="status" id="draft-note">Your session had ended: what you typed is filled in again (passwords and codes excepted). Check it and send the form again.</div>`

/**
 * Placed after the page's body: fills the form sent to the draft's action with what was typed, visible fields
 * only (never a hidden, password or file field, so the page's new security token stays).
 */
export function draftRefill(nonce: string, draft: Draft): Html {
  const data = JSON.stringify({ action: draft.action, fields: draft.fields }).replace(
    /</g,
    '\\u003c',
  )
  return html`<script type="application/json" id="svc-draft">${raw(data)}</script>
<script nonce="${nonce}">${raw(FILL_SCRIPT)}</script>`
}

const FILL_SCRIPT = `(() => {
  const draft = JSON.parse(document.getElementById('svc-draft').textContent)
  const skip = ['hidden', 'password', 'file', 'submit', 'button']
  for (const form of document.forms) {
    if (new URL(form.action, location.href).pathname !== draft.action) continue
    for (const [name, values] of draft.fields) {
      for (const el of form.elements) {
        if (el.name !== name || skip.includes(el.type)) continue
        if (el.type === 'checkbox' || el.type === 'radio') el.checked = values.includes(el.value)
        else if (el.tagName === 'SELECT' && el.multiple)
          for (const o of el.options) o.selected = values.includes(o.value)
        else el.value = values[0] ?? ''
      }
    }
  }
})()`
