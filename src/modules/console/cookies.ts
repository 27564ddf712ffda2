import type { FastifyReply } from 'fastify'
import { deriveKey, hmacSha256, randomBase62, safeEqual } from '../../lib/crypto.js'
import type { Flash } from './components.js'

/**
 * The console's cookies. All are HttpOnly and scoped to /console, `Secure` when BASE_URL is https:
 * - `svc_session`: the signed-in session's token (SameSite=Lax; the server keeps only its SHA-256);
 * - `svc_pending`: a sign-in waiting for its TOTP code (5 minutes, /console/sign-in only);
 * - `svc_presession`: the form token of pages without a session (sign-in, invitation), double-submitted;
 * - `svc_flash`: the message of the last action, signed, read once.
 */
export const SESSION_COOKIE = 'svc_session'
export const PENDING_COOKIE = 'svc_pending'
export const PRESESSION_COOKIE = 'svc_presession'
export const FLASH_COOKIE = 'svc_flash'

const TOKEN = /^[A-Za-z0-9]{20,64}$/

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim())
  }
  return out
}

/** A cookie value when it has the shape of a token (anything else is ignored, never looked up). */
export function tokenCookie(cookies: Map<string, string>, name: string): string | null {
  const value = cookies.get(name)
  return value && TOKEN.test(value) ? value : null
}

export interface CookieOptions {
  path?: string
  maxAgeSeconds?: number
  sameSite?: 'Lax' | 'Strict'
  secure: boolean
}

export function writeCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  o: CookieOptions,
): void {
  const parts = [
    `${name}=${value}`,
    `Path=${o.path ?? '/console'}`,
    'HttpOnly',
    `SameSite=${o.sameSite ?? 'Lax'}`,
  ]
  if (o.maxAgeSeconds !== undefined) parts.push(`Max-Age=${o.maxAgeSeconds}`)
  if (o.secure) parts.push('Secure')
  reply.header('Set-Cookie', parts.join('; '))
}

export function clearCookie(
  reply: FastifyReply,
  name: string,
  o: { path?: string; secure: boolean },
): void {
  writeCookie(reply, name, '', { path: o.path, maxAgeSeconds: 0, secure: o.secure })
}

/** The form token of a page without a session: an HMAC of the browser's pre-session cookie. */
export function preSessionToken(masterKey: Buffer, cookie: string): string {
  return hmacSha256(deriveKey(masterKey, 'console-presession-csrf'), cookie).toString('base64url')
}

export function newPreSessionCookie(): string {
  return randomBase62(32)
}

export function preSessionValid(masterKey: Buffer, cookie: string | null, given: string): boolean {
  return cookie !== null && given !== '' && safeEqual(given, preSessionToken(masterKey, cookie))
}

function flashMac(masterKey: Buffer, payload: string): string {
  return hmacSha256(deriveKey(masterKey, 'console-flash'), payload).toString('base64url')
}

export function encodeFlash(masterKey: Buffer, flash: Flash): string {
  const payload = Buffer.from(JSON.stringify([flash.kind, flash.text.slice(0, 500)])).toString(
    'base64url',
  )
  return `${payload}.${flashMac(masterKey, payload)}`
}

/** The flash message of a cookie, when its signature holds (a forged one is ignored). */
export function decodeFlash(masterKey: Buffer, value: string | undefined): Flash | null {
  if (!value) return null
  const [payload, mac] = value.split('.')
  if (!payload || !mac || !safeEqual(mac, flashMac(masterKey, payload))) return null
  try {
    const [kind, text] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [
      Flash['kind'],
      string,
    ]
    return ['ok', 'info', 'error'].includes(kind) && typeof text === 'string'
      ? { kind, text }
      : null
  } catch {
    return null
  }
}
