import { path } from '../core.js'
import type { ListResult } from '../pagination.js'
import type { Body, Item, ListParams, Schemas } from '../types.js'
import { Resource, type Promised, type RequestOptions } from './base.js'

/** `/v1/programs`: the programs the operator attached to the organization in this environment. */
export class Programs extends Resource {
  list(
    params?: ListParams<'/v1/programs'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Program']> {
    return this.pages('/v1/programs', params, options)
  }
}

/** `/v1/cardholders`. */
export class Cardholders extends Resource {
  create(
    params: Body<'/v1/cardholders', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Cardholder']> {
    return this.post('/v1/cardholders', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Cardholder']> {
    return this.get(path`/v1/cardholders/${id}`, undefined, options)
  }
  update(
    id: string,
    params: Body<'/v1/cardholders/{cardholder_id}', 'patch'>,
    options?: RequestOptions,
  ): Promised<Schemas['Cardholder']> {
    return this.patch(path`/v1/cardholders/${id}`, params, options)
  }
  list(
    params?: ListParams<'/v1/cardholders'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Cardholder']> {
    return this.pages('/v1/cardholders', params, options)
  }
  /** The cardholder's cards. */
  listCards(
    id: string,
    params?: ListParams<'/v1/cardholders/{cardholder_id}/cards'>,
    options?: RequestOptions,
  ): ListResult<Item<'/v1/cardholders/{cardholder_id}/cards'>> {
    return this.pages(path`/v1/cardholders/${id}/cards`, params, options)
  }
}

/** `/v1/cardholders/{id}/kyc`: KYC attestations. */
export class Kyc extends Resource {
  create(
    cardholderId: string,
    params: Body<'/v1/cardholders/{cardholder_id}/kyc', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['KycAttestation']> {
    return this.post(path`/v1/cardholders/${cardholderId}/kyc`, params, options)
  }
  list(
    cardholderId: string,
    params?: ListParams<'/v1/cardholders/{cardholder_id}/kyc'>,
    options?: RequestOptions,
  ): ListResult<Schemas['KycAttestation']> {
    return this.pages(path`/v1/cardholders/${cardholderId}/kyc`, params, options)
  }
}

/** `/v1/accounts`, with the ledger's credits, debits and entries. */
export class Accounts extends Resource {
  create(
    params: Body<'/v1/accounts', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Account']> {
    return this.post('/v1/accounts', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Account']> {
    return this.get(path`/v1/accounts/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/accounts'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Account']> {
    return this.pages('/v1/accounts', params, options)
  }
  credit(
    id: string,
    params: Body<'/v1/accounts/{account_id}/credit', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Account']> {
    return this.post(path`/v1/accounts/${id}/credit`, params, options)
  }
  debit(
    id: string,
    params: Body<'/v1/accounts/{account_id}/debit', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Account']> {
    return this.post(path`/v1/accounts/${id}/debit`, params, options)
  }
  block(
    id: string,
    params: Body<'/v1/accounts/{account_id}/block', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Account']> {
    return this.post(path`/v1/accounts/${id}/block`, params, options)
  }
  unblock(
    id: string,
    params: Body<'/v1/accounts/{account_id}/unblock', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Account']> {
    return this.post(path`/v1/accounts/${id}/unblock`, params, options)
  }
  /** Ledger entries, newest first. */
  listEntries(
    id: string,
    params?: ListParams<'/v1/accounts/{account_id}/entries'>,
    options?: RequestOptions,
  ): ListResult<Item<'/v1/accounts/{account_id}/entries'>> {
    return this.pages(path`/v1/accounts/${id}/entries`, params, options)
  }
  listCards(
    id: string,
    params?: ListParams<'/v1/accounts/{account_id}/cards'>,
    options?: RequestOptions,
  ): ListResult<Item<'/v1/accounts/{account_id}/cards'>> {
    return this.pages(path`/v1/accounts/${id}/cards`, params, options)
  }
}

/** `/v1/cards`: issue, lifecycle (activate, freeze, unfreeze, close, replace), secrets (details, hosted page, PIN). */
export class Cards extends Resource {
  create(params: Body<'/v1/cards', 'post'>, options?: RequestOptions): Promised<Schemas['Card']> {
    return this.post('/v1/cards', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Card']> {
    return this.get(path`/v1/cards/${id}`, undefined, options)
  }
  update(
    id: string,
    params: Body<'/v1/cards/{card_id}', 'patch'>,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.patch(path`/v1/cards/${id}`, params, options)
  }
  list(params?: ListParams<'/v1/cards'>, options?: RequestOptions): ListResult<Schemas['Card']> {
    return this.pages('/v1/cards', params, options)
  }
  activate(
    id: string,
    params: Body<'/v1/cards/{card_id}/activate', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/cards/${id}/activate`, params, options)
  }
  freeze(
    id: string,
    params: Body<'/v1/cards/{card_id}/freeze', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/cards/${id}/freeze`, params, options)
  }
  unfreeze(
    id: string,
    params: Body<'/v1/cards/{card_id}/unfreeze', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/cards/${id}/unfreeze`, params, options)
  }
  close(
    id: string,
    params: Body<'/v1/cards/{card_id}/close', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/cards/${id}/close`, params, options)
  }
  replace(
    id: string,
    params: Body<'/v1/cards/{card_id}/replace', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/cards/${id}/replace`, params, options)
  }
  /** The full number, expiry and CVC, encrypted to the public key given (never logged by the SDK). */
  retrieveDetails(
    id: string,
    params: Body<'/v1/cards/{card_id}/details', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['CardDetails']> {
    return this.post(path`/v1/cards/${id}/details`, params, options)
  }
  /**
   * A single-use hosted page (`url`) showing the card details in an iframe on `target_origin`: the number goes from
   * the service to the cardholder's browser, never through your servers. Create one each time the page is shown.
   */
  createRevealSession(
    id: string,
    params: Body<'/v1/cards/{card_id}/reveal_sessions', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['CardRevealSession']> {
    return this.post(path`/v1/cards/${id}/reveal_sessions`, params, options)
  }
  /** A one-time key to encrypt a PIN to (`setPin`, `verifyPin`). */
  createPinKey(
    id: string,
    params: Body<'/v1/cards/{card_id}/pin-key', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['PinKey']> {
    return this.post(path`/v1/cards/${id}/pin-key`, params, options)
  }
  setPin(
    id: string,
    params: Body<'/v1/cards/{card_id}/pin', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Card']> {
    return this.post(path`/v1/cards/${id}/pin`, params, options)
  }
  verifyPin(
    id: string,
    params: Body<'/v1/cards/{card_id}/pin/verify', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['PinVerification']> {
    return this.post(path`/v1/cards/${id}/pin/verify`, params, options)
  }
  /** What is left of each limit on the card: its own spending controls and the authorization rules' velocity limits. */
  spendLimits(id: string, options?: RequestOptions): Promised<Schemas['SpendLimitList']> {
    return this.get(path`/v1/cards/${id}/spend_limits`, undefined, options)
  }
}

/** `/v1/authorizations` (read; the card network creates them, `svc.simulate.authorizations` in sandbox). */
export class Authorizations extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Authorization']> {
    return this.get(path`/v1/authorizations/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/authorizations'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Authorization']> {
    return this.pages('/v1/authorizations', params, options)
  }
}

/** `/v1/transactions`. */
export class Transactions extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Transaction']> {
    return this.get(path`/v1/transactions/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/transactions'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Transaction']> {
    return this.pages('/v1/transactions', params, options)
  }
  refund(
    id: string,
    params: Body<'/v1/transactions/{transaction_id}/refund', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Transaction']> {
    return this.post(path`/v1/transactions/${id}/refund`, params, options)
  }
}

/** `/v1/disputes`. */
export class Disputes extends Resource {
  create(
    params: Body<'/v1/disputes', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Dispute']> {
    return this.post('/v1/disputes', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Dispute']> {
    return this.get(path`/v1/disputes/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/disputes'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Dispute']> {
    return this.pages('/v1/disputes', params, options)
  }
  withdraw(
    id: string,
    params: Body<'/v1/disputes/{dispute_id}/withdraw', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Dispute']> {
    return this.post(path`/v1/disputes/${id}/withdraw`, params, options)
  }
}

/** `/v1/network_tokens`: wallet tokens of cards. */
export class NetworkTokens extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['NetworkToken']> {
    return this.get(path`/v1/network_tokens/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/network_tokens'>,
    options?: RequestOptions,
  ): ListResult<Schemas['NetworkToken']> {
    return this.pages('/v1/network_tokens', params, options)
  }
  suspend(
    id: string,
    params: Body<'/v1/network_tokens/{network_token_id}/suspend', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['NetworkToken']> {
    return this.post(path`/v1/network_tokens/${id}/suspend`, params, options)
  }
  resume(
    id: string,
    params: Body<'/v1/network_tokens/{network_token_id}/resume', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['NetworkToken']> {
    return this.post(path`/v1/network_tokens/${id}/resume`, params, options)
  }
  /** Deletes the token (terminal): `POST /v1/network_tokens/{id}/delete`. */
  del(
    id: string,
    params: Body<'/v1/network_tokens/{network_token_id}/delete', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['NetworkToken']> {
    return this.post(path`/v1/network_tokens/${id}/delete`, params, options)
  }
}

/** `/v1/authorization_rules`: velocity limits, conditions and merchant locks on programs, accounts, cardholders or cards. */
export class AuthorizationRules extends Resource {
  create(
    params: Body<'/v1/authorization_rules', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['AuthorizationRule']> {
    return this.post('/v1/authorization_rules', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['AuthorizationRule']> {
    return this.get(path`/v1/authorization_rules/${id}`, undefined, options)
  }
  /** `name`, `parameters` (replacing the ones held), `mode`, `status`. */
  update(
    id: string,
    params: Body<'/v1/authorization_rules/{authorization_rule_id}', 'patch'>,
    options?: RequestOptions,
  ): Promised<Schemas['AuthorizationRule']> {
    return this.patch(path`/v1/authorization_rules/${id}`, params, options)
  }
  /** `{ card_id }` lists the rules that apply to that card. */
  list(
    params?: ListParams<'/v1/authorization_rules'>,
    options?: RequestOptions,
  ): ListResult<Schemas['AuthorizationRule']> {
    return this.pages('/v1/authorization_rules', params, options)
  }
  del(id: string, options?: RequestOptions): Promised<Schemas['AuthorizationRuleDeleted']> {
    return this.delete(path`/v1/authorization_rules/${id}`, options)
  }
  /** Replays the rule over the authorizations of `{ from, to }`: `pending`, then `completed` with its results. */
  createBacktest(
    id: string,
    params: Body<'/v1/authorization_rules/{authorization_rule_id}/backtests', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['AuthorizationRuleBacktest']> {
    return this.post(path`/v1/authorization_rules/${id}/backtests`, params, options)
  }
  retrieveBacktest(
    id: string,
    backtestId: string,
    options?: RequestOptions,
  ): Promised<Schemas['AuthorizationRuleBacktest']> {
    return this.get(path`/v1/authorization_rules/${id}/backtests/${backtestId}`, undefined, options)
  }
  listBacktests(
    id: string,
    params?: ListParams<'/v1/authorization_rules/{authorization_rule_id}/backtests'>,
    options?: RequestOptions,
  ): ListResult<Schemas['AuthorizationRuleBacktest']> {
    return this.pages(path`/v1/authorization_rules/${id}/backtests`, params, options)
  }
}

/** `/v1/authentications`: 3-D Secure challenges decided by the integrator. */
export class Authentications extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Authentication']> {
    return this.get(path`/v1/authentications/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/authentications'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Authentication']> {
    return this.pages('/v1/authentications', params, options)
  }
  approve(
    id: string,
    params: Body<'/v1/authentications/{authentication_id}/approve', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Authentication']> {
    return this.post(path`/v1/authentications/${id}/approve`, params, options)
  }
  decline(
    id: string,
    params: Body<'/v1/authentications/{authentication_id}/decline', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Authentication']> {
    return this.post(path`/v1/authentications/${id}/decline`, params, options)
  }
}
