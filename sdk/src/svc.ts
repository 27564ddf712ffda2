import { SvcCore, type SvcConfig } from './core.js'
import { EsimNamespace } from './resources/esim.js'
import {
  Accounts,
  Authentications,
  AuthorizationRules,
  Authorizations,
  Cardholders,
  Cards,
  Disputes,
  Kyc,
  NetworkTokens,
  Programs,
  Transactions,
} from './resources/issuing.js'
import {
  AuthorizationEndpointResource,
  OAuthClients,
  Reports,
  FxRates,
  WebhookEndpoints,
} from './resources/platform.js'
import { SimulateNamespace } from './resources/simulate.js'
import { EventsWithStream } from './stream.js'
import { Webhooks } from './webhooks.js'

/**
 * The client: `new Svc({ clientId, privateKey, baseUrl })`, then one resource per `/v1` area
 * (`svc.cards.create(…)`, `svc.esim.orders.list()`, `svc.simulate.authorizations.create(…)`, …).
 */
export class Svc {
  /** Webhook signature checks need no client: `Svc.webhooks.constructEvent(rawBody, header, secret)`. */
  static readonly webhooks = new Webhooks()
  readonly webhooks = Svc.webhooks

  readonly programs: Programs
  readonly cardholders: Cardholders
  readonly kyc: Kyc
  readonly accounts: Accounts
  readonly cards: Cards
  readonly authorizations: Authorizations
  readonly transactions: Transactions
  readonly disputes: Disputes
  readonly networkTokens: NetworkTokens
  readonly authorizationRules: AuthorizationRules
  readonly authentications: Authentications
  readonly webhookEndpoints: WebhookEndpoints
  readonly events: EventsWithStream
  readonly fxRates: FxRates
  readonly reports: Reports
  readonly oauthClients: OAuthClients
  readonly authorizationEndpoint: AuthorizationEndpointResource
  readonly esim: EsimNamespace
  readonly simulate: SimulateNamespace
  /** The transport (token, retries); for calls the resources do not cover: `svc.core.request({ method, path, body })`. */
  readonly core: SvcCore

  constructor(config: SvcConfig) {
    const core = new SvcCore(config)
    this.core = core
    this.programs = new Programs(core)
    this.cardholders = new Cardholders(core)
    this.kyc = new Kyc(core)
    this.accounts = new Accounts(core)
    this.cards = new Cards(core)
    this.authorizations = new Authorizations(core)
    this.transactions = new Transactions(core)
    this.disputes = new Disputes(core)
    this.networkTokens = new NetworkTokens(core)
    this.authorizationRules = new AuthorizationRules(core)
    this.authentications = new Authentications(core)
    this.webhookEndpoints = new WebhookEndpoints(core)
    this.events = new EventsWithStream(core)
    this.fxRates = new FxRates(core)
    this.reports = new Reports(core)
    this.oauthClients = new OAuthClients(core)
    this.authorizationEndpoint = new AuthorizationEndpointResource(core)
    this.esim = new EsimNamespace(core)
    this.simulate = new SimulateNamespace(core)
  }
}
