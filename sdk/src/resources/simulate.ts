import { path } from '../core.js'
import type { ListResult } from '../pagination.js'
import type { Answer, Body, ListParams, Schemas } from '../types.js'
import { Resource, type Promised, type RequestOptions } from './base.js'

/** Sandbox only (`/v1/simulate/*`): what the card network, the processor and the eSIM network would do. */
export class SimulateAuthorizations extends Resource {
  /** A card network authorization request on a card; answers the decision. */
  create(
    params: Body<'/v1/simulate/authorizations', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Authorization']> {
    return this.post('/v1/simulate/authorizations', params, options)
  }
  increment(
    id: string,
    params: Body<'/v1/simulate/authorizations/{authorization_id}/increment', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Authorization']> {
    return this.post(path`/v1/simulate/authorizations/${id}/increment`, params, options)
  }
  reverse(
    id: string,
    params: Body<'/v1/simulate/authorizations/{authorization_id}/reverse', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Authorization']> {
    return this.post(path`/v1/simulate/authorizations/${id}/reverse`, params, options)
  }
  /** Captures the authorization: answers the transaction. */
  capture(
    id: string,
    params: Body<'/v1/simulate/authorizations/{authorization_id}/capture', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Transaction']> {
    return this.post(path`/v1/simulate/authorizations/${id}/capture`, params, options)
  }
  expire(
    id: string,
    params: Body<'/v1/simulate/authorizations/{authorization_id}/expire', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Authorization']> {
    return this.post(path`/v1/simulate/authorizations/${id}/expire`, params, options)
  }
}

export class SimulateCards extends Resource {
  /** The processor issues the card now (`card.issued`). */
  issue(
    id: string,
    params: Body<'/v1/simulate/cards/{card_id}/issue', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/simulate/cards/${id}/issue`, params, options)
  }
  ship(
    id: string,
    params: Body<'/v1/simulate/cards/{card_id}/ship', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/simulate/cards/${id}/ship`, params, options)
  }
}

export class SimulateTransactions extends Resource {
  settle(
    id: string,
    params: Body<'/v1/simulate/transactions/{transaction_id}/settle', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Transaction']> {
    return this.post(path`/v1/simulate/transactions/${id}/settle`, params, options)
  }
}

export class SimulateRefunds extends Resource {
  /** A refund from the merchant, unlinked to a capture. */
  create(
    params: Body<'/v1/simulate/refunds', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Transaction']> {
    return this.post('/v1/simulate/refunds', params, options)
  }
}

export class SimulateNetworkTokens extends Resource {
  create(
    params: Body<'/v1/simulate/network_tokens', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['NetworkToken']> {
    return this.post('/v1/simulate/network_tokens', params, options)
  }
  activate(
    id: string,
    params: Body<'/v1/simulate/network_tokens/{network_token_id}/activate', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['NetworkToken']> {
    return this.post(path`/v1/simulate/network_tokens/${id}/activate`, params, options)
  }
}

export class SimulateAuthentications extends Resource {
  create(
    params: Body<'/v1/simulate/authentications', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Authentication']> {
    return this.post('/v1/simulate/authentications', params, options)
  }
}

export class SimulateDisputes extends Resource {
  resolve(
    id: string,
    params: Body<'/v1/simulate/disputes/{dispute_id}/resolve', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Dispute']> {
    return this.post(path`/v1/simulate/disputes/${id}/resolve`, params, options)
  }
}

export class SimulateProcessorFaults extends Resource {
  /** Makes the processor fail the next calls of an operation. */
  create(
    params: Body<'/v1/simulate/processor_faults', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['ProcessorFault']> {
    return this.post('/v1/simulate/processor_faults', params, options)
  }
}

export class SimulateEsim extends Resource {
  /** How the simulated eSIM network answers the next provisioning requests. */
  provisioning(
    params: Body<'/v1/simulate/esim/provisioning', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['EsimProvisioningSimulation']> {
    return this.post('/v1/simulate/esim/provisioning', params, options)
  }
  settleOrder(
    id: string,
    params: Body<'/v1/simulate/esim/orders/{order_id}/settle', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['EsimOrder']> {
    return this.post(path`/v1/simulate/esim/orders/${id}/settle`, params, options)
  }
  packageStatus(
    id: string,
    params: Body<'/v1/simulate/esim/packages/{package_id}/status', 'post'>,
    options?: RequestOptions,
  ): Promised<Answer<'/v1/simulate/esim/packages/{package_id}/status', 'post'>> {
    return this.post(path`/v1/simulate/esim/packages/${id}/status`, params, options)
  }
  usage(
    id: string,
    params: Body<'/v1/simulate/esim/esims/{esim_id}/usage', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Esim']> {
    return this.post(path`/v1/simulate/esim/esims/${id}/usage`, params, options)
  }
  /** Queues usage reports of many eSIMs for the usage sweep, as a network's feed delivers them. */
  usageReports(
    params: Body<'/v1/simulate/esim/usage_reports', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['EsimUsageReportBatch']> {
    return this.post('/v1/simulate/esim/usage_reports', params, options)
  }
  install(
    id: string,
    params: Body<'/v1/simulate/esim/esims/{esim_id}/install', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Esim']> {
    return this.post(path`/v1/simulate/esim/esims/${id}/install`, params, options)
  }
  location(
    id: string,
    params: Body<'/v1/simulate/esim/esims/{esim_id}/location', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Esim']> {
    return this.post(path`/v1/simulate/esim/esims/${id}/location`, params, options)
  }
}

/** Sandbox clocks: time that moves per test for the cardholders that join one (`clock_id`). */
export class SimulateClocks extends Resource {
  /** `{ frozen_time?, name? }`: a clock at that time (default now). */
  create(
    params: Body<'/v1/simulate/clocks', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['SandboxClock']> {
    return this.post('/v1/simulate/clocks', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['SandboxClock']> {
    return this.get(path`/v1/simulate/clocks/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/simulate/clocks'>,
    options?: RequestOptions,
  ): ListResult<Schemas['SandboxClock']> {
    return this.pages('/v1/simulate/clocks', params, options)
  }
  /** `{ to }` or `{ by: 'P8D' }`: answers once what fell due has run and the clock is ready. */
  advance(
    id: string,
    params: Body<'/v1/simulate/clocks/{clock_id}/advance', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['SandboxClock']> {
    return this.post(path`/v1/simulate/clocks/${id}/advance`, params, options)
  }
  del(id: string, options?: RequestOptions): Promised<Schemas['SandboxClockDeleted']> {
    return this.delete(path`/v1/simulate/clocks/${id}`, options)
  }
}

/** Sandbox rates: pin the rate the simulated processors convert at, for deterministic tests. */
export class SimulateFxRates extends Resource {
  /** `pin('EUR', 'USD', { rate: '1.0825' })`: spends in EUR on USD accounts convert at 1.0825 from now on. */
  pin(
    base: string,
    quote: string,
    params: Body<'/v1/simulate/fx_rates/{base}/{quote}', 'put'>,
    options?: RequestOptions,
  ): Promised<Schemas['FxRate']> {
    return this.put(path`/v1/simulate/fx_rates/${base}/${quote}`, params, options)
  }
}

/** `svc.simulate.*`. */
export class SimulateNamespace {
  readonly authorizations: SimulateAuthorizations
  readonly cards: SimulateCards
  readonly transactions: SimulateTransactions
  readonly refunds: SimulateRefunds
  readonly networkTokens: SimulateNetworkTokens
  readonly authentications: SimulateAuthentications
  readonly disputes: SimulateDisputes
  readonly processorFaults: SimulateProcessorFaults
  readonly esim: SimulateEsim
  readonly clocks: SimulateClocks
  readonly fxRates: SimulateFxRates
  constructor(core: ConstructorParameters<typeof SimulateCards>[0]) {
    this.authorizations = new SimulateAuthorizations(core)
    this.cards = new SimulateCards(core)
    this.transactions = new SimulateTransactions(core)
    this.refunds = new SimulateRefunds(core)
    this.networkTokens = new SimulateNetworkTokens(core)
    this.authentications = new SimulateAuthentications(core)
    this.disputes = new SimulateDisputes(core)
    this.processorFaults = new SimulateProcessorFaults(core)
    this.esim = new SimulateEsim(core)
    this.clocks = new SimulateClocks(core)
    this.fxRates = new SimulateFxRates(core)
  }
}
