/** Luhn check digit for a digit string (the digit that makes `digits + check` pass the Luhn test). */
export function luhnCheckDigit(digits: string): string {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    // Walking from the right, the digit next to the check digit is doubled first.
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return String((10 - (sum % 10)) % 10)
}

/** True when a digit string's last digit is the Luhn check digit of the others. */
export function luhnValid(digits: string): boolean {
  return digits.length > 1 && luhnCheckDigit(digits.slice(0, -1)) === digits[digits.length - 1]
}
