import type { Db } from '../db/types.js'
import { deriveKey, hmacSha256, safeEqual } from '../lib/crypto.js'
import { ulid } from '../lib/ids.js'
import type { Clock } from '../lib/clock.js'
import type { ProcessorProfile } from './catalog.js'
import { takeFault } from './faults.js'
import {
  ProcessorError, type CardDetails, type CreateAccountInput, type IssueCardInput, type Processor, type ProcessorOperation,
  type ProcessorScope, type SpendControlSupport, type UpstreamAccount, type UpstreamCard, type UpstreamCardStatus,
} from './port.js'
import { SimStore, type SimObject } from './sim-store.js'

export interface SimDeps {
  db: Db
  clock: Clock
  masterKey: Buffer
}

export interface SimBehaviour {
  /** Short prefix of upstream references, so logs show which simulator made an object. */
  referencePrefix: string
  /** Accounts are created in the background: `createAccount` answers a null reference until `getAccount` completes it. */
  asyncAccounts: boolean
  /** The spending controls this processor can enforce upstream. */
  spendControls: SpendControlSupport
}

/** Appends the Luhn check digit to a string of digits. */
export function withLuhn(digits: string): string {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 0) { d *= 2; if (d > 9) d -= 9 }
    sum += d
  }
  return digits + String((10 - (sum % 10)) % 10)
}

/**
 * The simulated processor both sandbox adapters are made of: it keeps its own records, honours injected
 * faults before every operation, and derives card numbers from a keyed hash of the upstream reference
 * (nothing card-secret is ever stored). The profile decides what it can do.
 */
export class SimulatedProcessor implements Processor {
  private readonly store: SimStore
  private readonly panKey: Buffer

  constructor(readonly profile: ProcessorProfile, private readonly behaviour: SimBehaviour, private readonly deps: SimDeps) {
    this.store = new SimStore(deps.db, profile.name)
    this.panKey = deriveKey(deps.masterKey, `sim-pan:${profile.name}`)
  }

  get name(): string { return this.profile.name }

  get spendControls(): SpendControlSupport { return this.behaviour.spendControls }

  private async begin(scope: ProcessorScope, operation: ProcessorOperation): Promise<Date> {
    await takeFault(this.deps.db, scope, operation)
    return this.deps.clock.now()
  }

  private reference(kind: string): string {
    return `${this.behaviour.referencePrefix}${kind}_${ulid().toLowerCase()}`
  }

  async createAccount(scope: ProcessorScope, input: CreateAccountInput): Promise<UpstreamAccount> {
    const now = await this.begin(scope, 'create_account')
    const state = this.behaviour.asyncAccounts ? 'creating' : 'open'
    const obj = await this.store.put(scope, 'account', input.accountId, this.reference('a'), state,
      { currency: input.currency, cardholder: input.cardholderId, program: input.programId }, now)
    return { upstreamReference: obj.state === 'creating' ? null : obj.reference }
  }

  async getAccount(scope: ProcessorScope, accountId: string): Promise<UpstreamAccount> {
    const now = await this.begin(scope, 'get_account')
    let obj = await this.store.byKey(scope, 'account', accountId)
    if (!obj) throw new ProcessorError('processor_permission_denied', 'get_account', 'Unknown account at the processor.')
    // The background creation finishes by the time the service looks again.
    if (obj.state === 'creating') obj = await this.store.update(obj.reference, 'open', {}, now)
    return { upstreamReference: obj.reference }
  }

  async issueCard(scope: ProcessorScope, input: IssueCardInput): Promise<UpstreamCard> {
    const now = await this.begin(scope, 'issue_card')
    if (!this.profile.formFactors.includes(input.formFactor)) {
      throw new ProcessorError('operation_unsupported', 'issue_card', `${this.name} does not issue ${input.formFactor} cards.`)
    }
    const obj = await this.store.put(scope, 'card', input.cardId, this.reference('c'), 'pending', {
      form_factor: input.formFactor, card_type: input.cardType, brand: input.brand, bin: input.bin,
      embossed_name: input.embossedName, account: input.accountReference,
    }, now)
    return this.present(obj)
  }

  async getCard(scope: ProcessorScope, reference: string): Promise<UpstreamCard> {
    const now = await this.begin(scope, 'get_card')
    let obj = await this.card(scope, reference, 'get_card')
    if (obj.state === 'pending') {
      // Issuance completes when the service polls: virtual cards start active, physical ones await activation.
      const expYear = now.getUTCFullYear() + 3
      const expMonth = now.getUTCMonth() + 1
      const last4 = this.pan(obj).slice(-4)
      obj = await this.store.update(reference, obj.data.form_factor === 'physical' ? 'inactive' : 'active', { exp_month: expMonth, exp_year: expYear, last4 }, now)
    }
    return this.present(obj)
  }

  async setCardStatus(scope: ProcessorScope, reference: string, status: Exclude<UpstreamCardStatus, 'pending'>): Promise<UpstreamCard> {
    const now = await this.begin(scope, 'set_card_status')
    const obj = await this.card(scope, reference, 'set_card_status')
    if (obj.state === 'closed' && status !== 'closed') {
      throw new ProcessorError('processor_permission_denied', 'set_card_status', 'The card is closed at the processor.')
    }
    if (obj.state === 'pending') throw new ProcessorError('processor_permission_denied', 'set_card_status', 'The card is not issued yet.')
    return this.present(await this.store.update(reference, status, {}, now))
  }

  async setPin(scope: ProcessorScope, reference: string, pin: string): Promise<void> {
    this.requireCapability('card_pin', 'set_pin')
    const now = await this.begin(scope, 'set_pin')
    const obj = await this.card(scope, reference, 'set_pin')
    await this.store.update(reference, obj.state, { pin_hash: this.pinHash(reference, pin) }, now)
  }

  async verifyPin(scope: ProcessorScope, reference: string, pin: string): Promise<boolean> {
    this.requireCapability('card_pin', 'verify_pin')
    await this.begin(scope, 'verify_pin')
    const obj = await this.card(scope, reference, 'verify_pin')
    const stored = obj.data.pin_hash
    return typeof stored === 'string' && safeEqual(stored, this.pinHash(reference, pin))
  }

  async revealDetails(scope: ProcessorScope, reference: string): Promise<CardDetails> {
    this.requireCapability('card_details', 'reveal_details')
    await this.begin(scope, 'reveal_details')
    const obj = await this.card(scope, reference, 'reveal_details')
    if (obj.state === 'pending') throw new ProcessorError('processor_permission_denied', 'reveal_details', 'The card is not issued yet.')
    const mac = hmacSha256(this.panKey, `cvc:${obj.reference}`)
    const cvc = String(mac.readUInt32BE(0) % 1000).padStart(3, '0')
    return { number: this.pan(obj), cvc, expMonth: Number(obj.data.exp_month), expYear: Number(obj.data.exp_year) }
  }

  private requireCapability(capability: string, operation: ProcessorOperation): void {
    if (!(this.profile.capabilities as readonly string[]).includes(capability)) {
      throw new ProcessorError('operation_unsupported', operation, `${this.name} has no ${operation} operation.`)
    }
  }

  private async card(scope: ProcessorScope, reference: string, operation: ProcessorOperation): Promise<SimObject> {
    const obj = await this.store.byReference(scope, 'card', reference)
    if (!obj) throw new ProcessorError('processor_permission_denied', operation, 'Unknown card at the processor.')
    return obj
  }

  /** 16-digit number: the program's BIN, digits from a keyed hash of the reference, then the Luhn digit. */
  private pan(obj: SimObject): string {
    const bin = String(obj.data.bin ?? this.profile.bin)
    const mac = hmacSha256(this.panKey, `pan:${obj.reference}`)
    let body = ''
    for (let i = 0; body.length < 15 - bin.length; i++) body += String(mac[i] % 10)
    return withLuhn(bin + body)
  }

  private pinHash(reference: string, pin: string): string {
    return hmacSha256(this.panKey, `pin:${reference}:${pin}`).toString('hex')
  }

  private present(obj: SimObject): UpstreamCard {
    return {
      upstreamReference: obj.reference,
      status: obj.state as UpstreamCardStatus,
      last4: (obj.data.last4 as string | undefined) ?? null,
      expMonth: (obj.data.exp_month as number | undefined) ?? null,
      expYear: (obj.data.exp_year as number | undefined) ?? null,
    }
  }
}
