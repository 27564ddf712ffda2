import { luhnCheckDigit, luhnValid } from '../../lib/luhn.js'

/** ICCID rules (ITU-T E.118): 19 digits here, `89` telecom prefix, last digit a Luhn check digit. */

/** Appends the Luhn check digit to an 18-digit ICCID body. */
export function iccidWithCheckDigit(body: string): string {
  return body + luhnCheckDigit(body)
}

/** True for a 19-digit ICCID with the `89` prefix and a valid Luhn check digit. */
export function isValidIccid(value: string): boolean {
  return /^89\d{17}$/.test(value) && luhnValid(value)
}
