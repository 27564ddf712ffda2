import { randomInt } from 'node:crypto'
import { isUniqueViolation } from '../db/tx.js'
import { decryptField, deriveKey, encryptField, hmacSha256 } from '../lib/crypto.js'
import { ProcessorError, type ProcessorOperation, type ProcessorScope } from './port.js'
import type { SealedCardData, SimObject, SimStore } from './sim-store.js'
import { luhnCheckDigit } from '../lib/luhn.js'

/** A source of uniformly random decimal digits; tests swap it to force card-number collisions. */
export type RandomDigits = (count: number) => string

/** Digits from the operating system's CSPRNG (`crypto.randomInt` is unbiased). */
export const secureRandomDigits: RandomDigits = (count) => {
  let out = ''
  for (let i = 0; i < count; i++) out += String(randomInt(10))
  return out
}

/** Appends the Luhn check digit to a string of digits. */
export function withLuhn(digits: string): string {
  return digits + luhnCheckDigit(digits)
}

export const PAN_LENGTH = 16
/** Draws per card before giving up: only a nearly full BIN range gets here (each draw misses with p = fill ratio). */
export const MAX_PAN_DRAWS = 20
/** Purpose keys (HKDF from the master key), one per use. */
export const CARD_DATA_PURPOSES = {
  pan: 'sim-card-pan',
  cvc: 'sim-card-cvc',
  panIndex: 'sim-card-pan-index',
} as const
const PAN_INDEX = 'sim_processor_objects_pan_hmac'

export interface CardNumberAndCode {
  number: string
  cvc: string
}

/**
 * Card numbers and security codes of the simulated processors: drawn at random when the card is issued
 * (program BIN + random digits + Luhn, 16 digits; 3-digit CVC), stored only encrypted, and kept unique
 * across every simulated card by an HMAC of the number under a unique index (drawn again on conflict).
 */
export class SimCardData {
  private readonly indexKey: Buffer

  constructor(
    private readonly store: SimStore,
    private readonly masterKey: Buffer,
    private readonly random: RandomDigits = secureRandomDigits,
  ) {
    this.indexKey = deriveKey(masterKey, CARD_DATA_PURPOSES.panIndex)
  }

  /** The uniqueness key of a number: keyed, so the column cannot be brute-forced back to PANs without the master key. */
  panHmac(pan: string): string {
    return hmacSha256(this.indexKey, pan).toString('hex')
  }

  /**
   * Draws a number on `bin` and a code, seals them, and hands them to `write`, which stores them (a number
   * another card holds fails on the unique index: drawn again). Answers what `write` answers.
   */
  async withFreshNumber<T>(
    bin: string,
    operation: ProcessorOperation,
    write: (sealed: SealedCardData) => Promise<T>,
  ): Promise<T> {
    if (!/^[0-9]{6,15}$/.test(bin)) {
      throw new ProcessorError(
        'processor_permission_denied',
        operation,
        `BIN "${bin}" is not a BIN this processor can issue on.`,
      )
    }
    const cvcEncrypted = encryptField(this.masterKey, CARD_DATA_PURPOSES.cvc, this.random(3))
    for (let draw = 0; draw < MAX_PAN_DRAWS; draw++) {
      const pan = withLuhn(bin + this.random(PAN_LENGTH - 1 - bin.length))
      try {
        return await write({
          panEncrypted: encryptField(this.masterKey, CARD_DATA_PURPOSES.pan, pan),
          cvcEncrypted,
          panHmac: this.panHmac(pan),
        })
      } catch (err) {
        if (!isUniqueViolation(err, PAN_INDEX)) throw err
      }
    }
    throw new ProcessorError(
      'processor_unavailable',
      operation,
      `No unused card number found on BIN ${bin} after ${MAX_PAN_DRAWS} draws.`,
    )
  }

  /** A card created before the simulator stored card data gets its number and code now (once, even under races). */
  async ensure(
    scope: ProcessorScope,
    obj: SimObject,
    operation: ProcessorOperation,
    now: Date,
  ): Promise<SimObject> {
    if (obj.pan_hmac !== null) return obj
    const assigned = await this.withFreshNumber(String(obj.data.bin ?? ''), operation, (sealed) =>
      this.store.assignCardData(obj.reference, sealed, now),
    )
    return assigned ?? (await this.store.byReference(scope, 'card', obj.reference))!
  }

  /** Decrypts the stored number and code (the only place they exist in clear, in memory). */
  reveal(obj: SimObject, operation: ProcessorOperation): CardNumberAndCode {
    if (obj.pan_encrypted === null || obj.cvc_encrypted === null) {
      throw new ProcessorError(
        'processor_permission_denied',
        operation,
        'The processor holds no card number for this card.',
      )
    }
    return {
      number: decryptField(this.masterKey, CARD_DATA_PURPOSES.pan, obj.pan_encrypted),
      cvc: decryptField(this.masterKey, CARD_DATA_PURPOSES.cvc, obj.cvc_encrypted),
    }
  }
}
