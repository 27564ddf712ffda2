import { readFileSync } from 'node:fs'
import { hash, parseOptions, verify, type Algorithm } from '@node-rs/argon2'

/**
 * Passwords: argon2id at OWASP's minimum (19 MiB of memory, 2 passes, 1 lane), the parameters recorded in the
 * PHC string it returns (`$argon2id$v=19$m=19456,t=2,p=1$…`), so a later, stronger setting still verifies old
 * hashes and rehashes them at the next sign-in.
 */
export const ARGON2_PARAMS = {
  algorithm: 2 as Algorithm,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const

export const MIN_PASSWORD_LENGTH = 12
/** Long enough for any passphrase, short enough that hashing it costs what hashing a normal one does. */
export const MAX_PASSWORD_LENGTH = 256

/**
 * A hash of a random password with the same parameters: an unknown email (or a person without a password yet)
 * is verified against it, so the answer takes as long as a wrong password does.
 */
const DUMMY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$/5+xot/U3dBJUUUR4gWY5g$6Qy8aPgpn5mGuN9Fdt1HUxk14DCF8mAUplmUKrnMeU0'

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS)
}

/** True when `password` matches; with no stored hash the dummy one is verified anyway (same time) and false is answered. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  const ok = await verify(stored ?? DUMMY_HASH, password.slice(0, MAX_PASSWORD_LENGTH)).catch(
    () => false,
  )
  return stored !== null && ok
}

/** True when the stored hash was made with weaker parameters than today's: rehash it while the password is at hand. */
export function needsRehash(stored: string): boolean {
  try {
    const o = parseOptions(stored)
    return (
      o.algorithm !== ARGON2_PARAMS.algorithm ||
      o.memoryCost < ARGON2_PARAMS.memoryCost ||
      o.timeCost < ARGON2_PARAMS.timeCost
    )
  } catch {
    return true
  }
}

/** The shipped list (common-passwords.txt: its header says where it comes from), lower case. */
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')),
)

/** Keyboard rows and alphabetic/numeric sequences: a password that only walks one of them is a run. */
const RUNS = [
  '1234567890',
  '1234567890qwertyuiopasdfghjklzxcvbnm',
  'qwertzuiopasdfghjklyxcvbnm',
  'azertyuiopqsdfghjklmwxcvbn',
  'abcdefghijklmnopqrstuvwxyz',
  '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p',
]

function isRun(text: string): boolean {
  for (const run of RUNS) {
    for (const line of [run, [...run].reverse().join('')]) {
      // Walking the line, possibly more than once round (1234567890123).
      const cycle = line.repeat(Math.ceil(text.length / line.length) + 1)
      if (cycle.includes(text)) return true
    }
  }
  return false
}

/** Made of one short unit said again and again: `aaaaaaaaaaaa`, `abcabcabcabc`, `1212121212121`. */
function isRepetition(text: string): boolean {
  for (let unit = 1; unit <= 4 && unit * 3 <= text.length; unit++) {
    const piece = text.slice(0, unit)
    if (piece.repeat(Math.ceil(text.length / unit)).slice(0, text.length) === text) return true
  }
  return false
}

/** The word under decoration: leading and trailing digits, spaces and punctuation removed (`Password2024!` → `password`). */
function core(text: string): string {
  return text.replace(/^[^a-z]+/, '').replace(/[^a-z]+$/, '')
}

/**
 * Why a new password is refused, as a sentence for the form, or null when it is acceptable. The rules: at
 * least 12 characters (at most 256); not one of the shipped common passwords, also when decorated with
 * leading or trailing digits and punctuation or when it repeats one (`passwordpassword`); not containing the
 * email address or its local part (when 3 characters or more); not one character or a short unit repeated;
 * not a keyboard row or an alphabetic or numeric run.
 */
export function passwordProblem(password: string, email: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `Use at least ${MIN_PASSWORD_LENGTH} characters.`
  if (password.length > MAX_PASSWORD_LENGTH) return `Use at most ${MAX_PASSWORD_LENGTH} characters.`
  const lower = password.toLowerCase()
  const compact = lower.replace(/[\s_.-]+/g, '')
  const local = email.toLowerCase().split('@')[0] ?? ''
  if (
    lower.includes(email.toLowerCase()) ||
    (local.length >= 3 && compact.includes(local.replace(/[\s_.-]+/g, '')))
  ) {
    return 'Do not use your email address in your password.'
  }
  if (isRepetition(compact)) return 'Do not repeat the same characters; choose a longer phrase.'
  if (isRun(compact)) return 'Do not use a keyboard row or a sequence of letters or digits.'
  const candidates = [lower, compact, core(lower), core(compact)]
  for (const c of candidates) {
    if (COMMON_PASSWORDS.has(c)) return 'This password is too common; choose another.'
    // A common word said twice or more (passwordpassword, qwerty123qwerty123).
    for (let unit = 4; unit * 2 <= c.length; unit++) {
      if (
        c.length % unit === 0 &&
        c.slice(0, unit).repeat(c.length / unit) === c &&
        COMMON_PASSWORDS.has(c.slice(0, unit))
      ) {
        return 'This password is too common; choose another.'
      }
    }
  }
  return null
}
