/** ICCID rules (ITU-T E.118): 19 digits here, `89` telecom prefix, last digit a Luhn check digit. */

function luhnSum(digits: string, doubleEven: boolean): number {
  let sum = 0
  for (let i = digits.length - 1, pos = 0; i >= 0; i--, pos++) {
    let d = digits.charCodeAt(i) - 48
    if ((pos % 2 === 0) === doubleEven) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum
}

/** Appends the Luhn check digit to an 18-digit ICCID body. */
export function iccidWithCheckDigit(body: string): string {
  const check = (10 - (luhnSum(body, true) % 10)) % 10
  return body + String(check)
}

/** True for a 19-digit ICCID with the `89` prefix and a valid Luhn check digit. */
export function isValidIccid(value: string): boolean {
  return /^89\d{17}$/.test(value) && luhnSum(value, false) % 10 === 0
}
