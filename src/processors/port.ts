import type { Db } from '../db/types.js'
import type { Capability } from '../http/capability.js'
import type { Clock } from '../lib/clock.js'

/**
 * The one interface every card processor adapter implements (simulated or real), and the object that
 * describes a processor (`ProcessorDefinition`: its traits and a factory for its adapter). The service
 * calls an adapter outside database transactions: record intent → call → record outcome (see `calls.ts`).
 */

export const ALL_CAPABILITIES: Capability[] = [
  'account_credit',
  'account_debit',
  'account_status',
  'card_pin',
  'card_details',
  'network_tokens',
  'three_d_secure',
]

/** What a processor can do: a program bound to it inherits these traits when the operator creates it. */
export interface ProcessorProfile {
  /** The name programs are bound to (`program.processor`); unique in the list. */
  name: string
  /** The optional operations its programs get (routes are mounted per program by capability). */
  capabilities: Capability[]
  /** What it issues; a program may narrow these, never widen them. */
  formFactors: string[]
  cardTypes: string[]
  cardBrand: 'visa' | 'mastercard'
  /** The default BIN of its programs' cards (the operator may give a program another). */
  bin: string
  oneCardPerCardholder: boolean
  identityEvidenceRequired: boolean
  addressChangeRequiresKyc: boolean
  kycInitialStatus: 'not_started' | 'pending'
}

/** The simulated network feeds a sandbox processor can inject: wallet tokens, 3-D Secure challenges, dispute outcomes. */
export type SimulatorFeed = 'network_tokens' | 'three_d_secure' | 'disputes'

/** What an adapter is built from, once per runtime: the database (the simulators keep their records there), the clock, the master key. */
export interface ProcessorDeps {
  db: Db
  clock: Clock
  masterKey: Buffer
}

/**
 * A processor, whole: everything the service knows of it, in one object in one file, listed once in
 * `PROCESSORS` (`catalog.ts`). The runtime builds the adapters from the list (`createProcessorRegistry`).
 */
export interface ProcessorDefinition {
  profile: ProcessorProfile
  /** The spending controls it enforces upstream; a card asking for others is `spend_control_unsupported`. */
  spendControls: SpendControlSupport
  /** The sandbox feeds it can inject (`requireSimulatorFeed`); none for a processor without a simulator. */
  simulatorFeeds: readonly SimulatorFeed[]
  /** Builds its adapter (the implementation of `Processor` below); its `name` must be `profile.name`. */
  create(deps: ProcessorDeps): Processor
}

/** Every operation a processor can be asked for; fault injection names the same operations. */
export const PROCESSOR_OPERATIONS = [
  'create_account',
  'get_account',
  'set_account_status',
  'issue_card',
  'get_card',
  'set_card_status',
  'set_pin',
  'verify_pin',
  'reveal_details',
] as const
export type ProcessorOperation = (typeof PROCESSOR_OPERATIONS)[number]

/** Whose request it is: processors keep each tenant's objects apart (and the simulator scopes faults by it). */
export interface ProcessorScope {
  organizationId: string
  environment: string
  /**
   * Sandbox: the time of the sandbox clock the object is under (docs/sandbox-clocks.md), what the simulator dates
   * the card it issues from (its expiry); absent: the simulator's own time.
   */
  at?: Date
}

export interface CreateAccountInput {
  /** Our account id: the processor's idempotency key, so a retried call never opens a second account. */
  accountId: string
  programId: string
  cardholderId: string
  currency: string
}

export type UpstreamAccountStatus = 'open' | 'blocked'

/** The processor's view of an account: `upstreamReference` is null while it is still being created. */
export interface UpstreamAccount {
  upstreamReference: string | null
}

export interface IssueCardInput {
  /** Our card id: the processor's idempotency key. */
  cardId: string
  accountReference: string
  programId: string
  cardholderId: string
  formFactor: 'virtual' | 'physical'
  cardType: string
  brand: string
  bin: string
  embossedName: string
}

export type UpstreamCardStatus = 'pending' | 'inactive' | 'active' | 'frozen' | 'closed'

/** The processor's view of a card; number data is only ever returned by `revealDetails`. */
export interface UpstreamCard {
  upstreamReference: string
  status: UpstreamCardStatus
  last4: string | null
  expMonth: number | null
  expYear: number | null
}

export interface CardDetails {
  number: string
  cvc: string
  expMonth: number
  expYear: number
}

/** Spending controls a processor enforces upstream (limit intervals, list controls); others are `spend_control_unsupported`. */
export interface SpendControlSupport {
  intervals: readonly string[]
  lists: readonly string[]
}

/**
 * The rate a processor converts at, `base → quote`: `rate` is quote-per-base as canonical decimal text
 * (`src/lib/fx.ts`), `source` where it comes from (`network`: the card network's, sent with the authorization and
 * again at clearing; `sandbox`: the simulators' rate table or a rate the organization pinned), `rateAt` when it was set.
 */
export interface FxQuote {
  rate: string
  source: 'network' | 'sandbox'
  rateAt: Date
}

/** The tenant's pinned sandbox rates into one currency, by base: `[rate, pinned at]` (`sandboxPinsSql`). */
export type SandboxPins = Record<string, [rate: string, pinnedAt: string]>

/**
 * Rates the caller's own read already carries: the authorization decision's statement reads the tenant's pinned
 * sandbox rates, so the simulators answer a spend abroad without a read of their own. Other adapters ignore it.
 */
export interface FxRatesRead {
  sandboxPins: SandboxPins | null
}

/** A card processor. Methods throw `ProcessorError` when the processor fails or refuses. */
export interface Processor {
  readonly name: string
  readonly profile: ProcessorProfile
  readonly spendControls: SpendControlSupport
  /** Opens the account; processors that create accounts asynchronously answer a null reference. */
  createAccount(scope: ProcessorScope, input: CreateAccountInput): Promise<UpstreamAccount>
  /** Reads the account back by our id, to learn when an asynchronous creation has finished. */
  getAccount(scope: ProcessorScope, accountId: string): Promise<UpstreamAccount>
  /** Blocks or reopens the account upstream (capability `account_status`); `operation_unsupported` without it. */
  setAccountStatus(
    scope: ProcessorScope,
    accountId: string,
    status: UpstreamAccountStatus,
  ): Promise<void>
  /** Requests a card; issuance is asynchronous, so the answer is `pending` until `getCard` says otherwise. */
  issueCard(scope: ProcessorScope, input: IssueCardInput): Promise<UpstreamCard>
  /** Reads a card by its upstream reference (issuance completes here). */
  getCard(scope: ProcessorScope, reference: string): Promise<UpstreamCard>
  setCardStatus(
    scope: ProcessorScope,
    reference: string,
    status: Exclude<UpstreamCardStatus, 'pending'>,
  ): Promise<UpstreamCard>
  /** Sets the PIN of a card (plain digits; the service decrypts before calling). */
  setPin(scope: ProcessorScope, reference: string, pin: string): Promise<void>
  verifyPin(scope: ProcessorScope, reference: string, pin: string): Promise<boolean>
  revealDetails(scope: ProcessorScope, reference: string): Promise<CardDetails>
  /**
   * The rate it converts a spend in `base` (the merchant's currency) into `quote` (the account's) at, for this tenant
   * at `at`. Both are upper-case ISO 4217 codes the service knows (`src/lib/currencies.ts`), never equal: the caller
   * converts only across currencies. A real network gives the rate with the authorization and again at clearing; the
   * adapter answers the one it was given for the message being handled.
   */
  fxRate(
    scope: ProcessorScope,
    base: string,
    quote: string,
    at: Date,
    carried?: FxRatesRead,
  ): Promise<FxQuote>
}

export type ProcessorFailure =
  | 'processor_unavailable'
  | 'processor_permission_denied'
  | 'operation_unsupported'

/** A processor failed (`processor_unavailable`), refused us (`processor_permission_denied`) or lacks the operation. */
export class ProcessorError extends Error {
  constructor(
    readonly failure: ProcessorFailure,
    readonly operation: ProcessorOperation,
    message?: string,
  ) {
    super(message ?? `${operation}: ${failure}`)
    this.name = 'ProcessorError'
  }
}

export function isProcessorError(err: unknown): err is ProcessorError {
  return err instanceof ProcessorError
}
