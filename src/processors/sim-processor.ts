import { deriveKey, hmacSha256, safeEqual } from '../lib/crypto.js'
import { ulid } from '../lib/ids.js'
import { takeFault } from './faults.js'
import {
  ProcessorError,
  type CardDetails,
  type CreateAccountInput,
  type FxQuote,
  type FxRatesRead,
  type IssueCardInput,
  type Processor,
  type ProcessorDeps,
  type ProcessorOperation,
  type ProcessorProfile,
  type ProcessorScope,
  type SpendControlSupport,
  type UpstreamAccount,
  type UpstreamAccountStatus,
  type UpstreamCard,
  type UpstreamCardStatus,
} from './port.js'
import { sandboxFxRate } from './sandbox-fx.js'
import { SimCardData, type RandomDigits } from './sim-card-data.js'
import { SimStore, type SimObject } from './sim-store.js'

export { withLuhn } from './sim-card-data.js'

export interface SimDeps extends ProcessorDeps {
  /** Where card numbers and codes come from (the CSPRNG unless a test forces collisions). */
  randomDigits?: RandomDigits
}

export interface SimBehaviour {
  /** Short prefix of upstream references, so logs show which simulator made an object. */
  referencePrefix: string
  /** Accounts are created in the background: `createAccount` answers a null reference until `getAccount` completes it. */
  asyncAccounts: boolean
  /** The spending controls this processor can enforce upstream. */
  spendControls: SpendControlSupport
}

/**
 * The simulated processor the sandbox adapters are made of (each processor's file builds one from its
 * profile and behaviour, in its `create`): it keeps its own records, honours injected faults before every
 * operation, draws each card's number and code at issuance and keeps them encrypted (`sim-card-data.ts`),
 * and keeps PINs only as a keyed hash. The profile decides what it can do.
 */
export class SimulatedProcessor implements Processor {
  private readonly store: SimStore
  private readonly cardData: SimCardData
  private readonly pinKey: Buffer

  constructor(
    readonly profile: ProcessorProfile,
    private readonly behaviour: SimBehaviour,
    private readonly deps: SimDeps,
  ) {
    this.store = new SimStore(deps.db, profile.name)
    this.cardData = new SimCardData(this.store, deps.masterKey, deps.randomDigits)
    this.pinKey = deriveKey(deps.masterKey, `sim-pin:${profile.name}`)
  }

  get name(): string {
    return this.profile.name
  }

  get spendControls(): SpendControlSupport {
    return this.behaviour.spendControls
  }

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
    const obj = await this.store.put(
      scope,
      'account',
      input.accountId,
      this.reference('a'),
      state,
      { currency: input.currency, cardholder: input.cardholderId, program: input.programId },
      now,
    )
    return { upstreamReference: obj.state === 'creating' ? null : obj.reference }
  }

  async getAccount(scope: ProcessorScope, accountId: string): Promise<UpstreamAccount> {
    const now = await this.begin(scope, 'get_account')
    let obj = await this.store.byKey(scope, 'account', accountId)
    if (!obj)
      throw new ProcessorError(
        'processor_permission_denied',
        'get_account',
        'Unknown account at the processor.',
      )
    // The background creation finishes by the time the service looks again.
    if (obj.state === 'creating') obj = await this.store.update(obj.reference, 'open', {}, now)
    return { upstreamReference: obj.reference }
  }

  async setAccountStatus(
    scope: ProcessorScope,
    accountId: string,
    status: UpstreamAccountStatus,
  ): Promise<void> {
    this.requireCapability('account_status', 'set_account_status')
    const now = await this.begin(scope, 'set_account_status')
    const obj = await this.store.byKey(scope, 'account', accountId)
    if (!obj)
      throw new ProcessorError(
        'processor_permission_denied',
        'set_account_status',
        'Unknown account at the processor.',
      )
    // `state` tracks the creation; the status the service set is kept beside it.
    await this.store.update(obj.reference, obj.state, { status }, now)
  }

  async issueCard(scope: ProcessorScope, input: IssueCardInput): Promise<UpstreamCard> {
    const now = await this.begin(scope, 'issue_card')
    if (!this.profile.formFactors.includes(input.formFactor)) {
      throw new ProcessorError(
        'operation_unsupported',
        'issue_card',
        `${this.name} does not issue ${input.formFactor} cards.`,
      )
    }
    const reference = this.reference('c')
    const data = {
      form_factor: input.formFactor,
      card_type: input.cardType,
      brand: input.brand,
      bin: input.bin,
      embossed_name: input.embossedName,
      account: input.accountReference,
    }
    // The number and code are drawn now and stored with the card; a retried call gets the first ones back.
    const obj = await this.cardData.withFreshNumber(input.bin, 'issue_card', (sealed) =>
      this.store.put(scope, 'card', input.cardId, reference, 'pending', data, now, sealed),
    )
    return this.present(await this.cardData.ensure(scope, obj, 'issue_card', now))
  }

  async getCard(scope: ProcessorScope, reference: string): Promise<UpstreamCard> {
    const now = await this.begin(scope, 'get_card')
    let obj = await this.card(scope, reference, 'get_card')
    if (obj.state === 'pending') {
      // Issuance completes when the service polls: virtual cards start active, physical ones await activation.
      // Dated on the card's sandbox clock when it is under one (docs/sandbox-clocks.md).
      const issued = scope.at ?? now
      const expYear = issued.getUTCFullYear() + 3
      const expMonth = issued.getUTCMonth() + 1
      // Cards requested before the simulator stored card data get theirs here.
      obj = await this.cardData.ensure(scope, obj, 'get_card', now)
      const last4 = this.cardData.reveal(obj, 'get_card').number.slice(-4)
      obj = await this.store.update(
        reference,
        obj.data.form_factor === 'physical' ? 'inactive' : 'active',
        { exp_month: expMonth, exp_year: expYear, last4 },
        now,
      )
    }
    return this.present(obj)
  }

  async setCardStatus(
    scope: ProcessorScope,
    reference: string,
    status: Exclude<UpstreamCardStatus, 'pending'>,
  ): Promise<UpstreamCard> {
    const now = await this.begin(scope, 'set_card_status')
    const obj = await this.card(scope, reference, 'set_card_status')
    if (obj.state === 'closed' && status !== 'closed') {
      throw new ProcessorError(
        'processor_permission_denied',
        'set_card_status',
        'The card is closed at the processor.',
      )
    }
    if (obj.state === 'pending')
      throw new ProcessorError(
        'processor_permission_denied',
        'set_card_status',
        'The card is not issued yet.',
      )
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
    if (obj.state === 'pending')
      throw new ProcessorError(
        'processor_permission_denied',
        'reveal_details',
        'The card is not issued yet.',
      )
    const { number, cvc } = this.cardData.reveal(obj, 'reveal_details')
    return { number, cvc, expMonth: Number(obj.data.exp_month), expYear: Number(obj.data.exp_year) }
  }

  /** The sandbox's rate: the organization's pinned one first, else the built-in table (`sandbox-fx.ts`). */
  async fxRate(
    scope: ProcessorScope,
    base: string,
    quote: string,
    at: Date,
    carried?: FxRatesRead,
  ): Promise<FxQuote> {
    const { db } = this.deps
    const pins = carried?.sandboxPins
    const { rate, source, rateAt } = await sandboxFxRate(db, scope, base, quote, at, pins)
    return { rate, source, rateAt }
  }

  private requireCapability(capability: string, operation: ProcessorOperation): void {
    if (!(this.profile.capabilities as readonly string[]).includes(capability)) {
      throw new ProcessorError(
        'operation_unsupported',
        operation,
        `${this.name} has no ${operation} operation.`,
      )
    }
  }

  private async card(
    scope: ProcessorScope,
    reference: string,
    operation: ProcessorOperation,
  ): Promise<SimObject> {
    const obj = await this.store.byReference(scope, 'card', reference)
    if (!obj)
      throw new ProcessorError(
        'processor_permission_denied',
        operation,
        'Unknown card at the processor.',
      )
    return obj
  }

  /** Keyed hash of the PIN, bound to the card: equal PINs on two cards never share a stored value. */
  private pinHash(reference: string, pin: string): string {
    return hmacSha256(this.pinKey, `pin:${reference}:${pin}`).toString('hex')
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
