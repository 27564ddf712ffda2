import { luhnCheckDigit, luhnValid as luhnDigitsValid } from '../../lib/luhn.js'

export { luhnCheckDigit }

/** True when the whole number (check digit included) passes the Luhn test: a sanity check on processor data. */
export function luhnValid(number: string): boolean {
  if (!/^[0-9]{12,19}$/.test(number)) return false
  return luhnDigitsValid(number)
}

/** Cards are valid through the last day of the expiry month: this is the first instant they are `expired` (UTC). */
export function expiryInstant(expMonth: number, expYear: number): Date {
  return new Date(Date.UTC(expYear, expMonth, 1))
}

/** True once the expiry month of a card has ended. */
export function isPastExpiry(expMonth: number | null, expYear: number | null, now: Date): boolean {
  if (expMonth === null || expYear === null) return false
  return now.getTime() >= expiryInstant(expMonth, expYear).getTime()
}
