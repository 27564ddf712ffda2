import { randomFillSync } from 'node:crypto'

/** Crockford base32, the ULID alphabet: ids sort by creation time as plain strings. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

let lastTime = 0
let lastRandom: number[] = []

function encodeTime(time: number): string {
  let out = ''
  for (let i = 9; i >= 0; i--) {
    const mod = time % 32
    out = ALPHABET[mod] + out
    time = (time - mod) / 32
  }
  return out
}

/** Random bytes drawn a page at a time: one call into the CSPRNG per 256 ids instead of one per id. */
const randomPool = Buffer.allocUnsafe(4096)
let randomPoolOffset = randomPool.length

function freshRandom(): number[] {
  if (randomPoolOffset + 16 > randomPool.length) {
    randomFillSync(randomPool)
    randomPoolOffset = 0
  }
  const digits = new Array<number>(16)
  for (let i = 0; i < 16; i++) digits[i] = randomPool[randomPoolOffset + i] & 31
  randomPoolOffset += 16
  return digits
}

/** Increments the random part so ids made in the same millisecond still sort in creation order. */
function increment(digits: number[]): number[] {
  const next = digits.slice()
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++
      return next
    }
    next[i] = 0
  }
  return freshRandom()
}

/** A time-sortable identifier body of 26 characters (ULID layout). */
export function ulid(now = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom)
  } else {
    lastTime = now
    lastRandom = freshRandom()
  }
  return encodeTime(lastTime) + lastRandom.map((d) => ALPHABET[d]).join('')
}

export type IdPrefix =
  | 'org'
  | 'prog'
  | 'oc'
  | 'req'
  | 'chd'
  | 'kyc'
  | 'kycdoc'
  | 'acct'
  | 'le'
  | 'card'
  | 'pink'
  | 'crs'
  | 'auth'
  | 'txn'
  | 'dsp'
  | 'ntok'
  | 'tdsa'
  | 'whe'
  | 'evt'
  | 'whd'
  | 'wha'
  | 'job'
  | 'pkg'
  | 'topup'
  | 'esord'
  | 'esim'
  | 'h5'
  | 'rpt'
  | 'hold'
  | 'aud'
  | 'usr'
  | 'inv'
  | 'aep'
  | 'aea'
  | 'arl'
  | 'arb'
  | 'clk'

/**
 * New id with its type prefix, e.g. `chd_01JD…`. `at`: the row's own creation time, when queries bound a
 * time window by id (`lowestIdAt`); the id's time is then never earlier than `at`.
 */
export function newId(prefix: IdPrefix, at?: Date): string {
  return `${prefix}_${ulid(at?.getTime())}`
}

/** The lowest id of that prefix whose time is `at` or later: `id >= lowestIdAt(p, t)` holds for every id made at or after t. */
export function lowestIdAt(prefix: IdPrefix, at: Date): string {
  return `${prefix}_${encodeTime(Math.max(0, at.getTime()))}${'0'.repeat(16)}`
}

/**
 * The prefix and time part of an id made at `at` (`whd_01JD3R5M7N`): followed by 16 characters of the id alphabet
 * (uppercase hexadecimal digits are among them) it is an id that sorts at that time. For ids built in SQL.
 */
export function idHeadAt(prefix: IdPrefix, at: Date): string {
  return `${prefix}_${encodeTime(Math.max(0, at.getTime()))}`
}

const ID_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/

/** True when `value` has the shape of an id of that prefix; lookups skip the database otherwise. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_BODY.test(value.slice(prefix.length + 1))
}
