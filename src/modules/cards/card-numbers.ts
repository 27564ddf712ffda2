/** Luhn check digit for a digit string (the digit that makes `digits + check` pass the Luhn test). */
export function luhnCheckDigit(digits: string): string {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    // Walking from the right, the digit next to the check digit is doubled first.
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return String((10 - (sum % 10)) % 10)
}

/** True when the whole number (check digit included) passes the Luhn test: a sanity check on processor data. */
export function luhnValid(number: string): boolean {
  if (!/^[0-9]{12,19}$/.test(number)) return false
  return luhnCheckDigit(number.slice(0, -1)) === number[number.length - 1]
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
