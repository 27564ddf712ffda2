import { path } from '../core.js'
import type { ListResult } from '../pagination.js'
import type { Body, Item, ListParams, Schemas } from '../types.js'
import { Resource, type Promised, type RequestOptions } from './base.js'

/** `/v1/webhook_endpoints`: endpoints, their delivery log, replays and the test event. */
export class WebhookEndpoints extends Resource {
  /** The answer carries `secret` (`whsec_…`): keep it, it is shown only here and by `rotateSecret`. */
  create(
    params: Body<'/v1/webhook_endpoints', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['WebhookEndpoint']> {
    return this.post('/v1/webhook_endpoints', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['WebhookEndpoint']> {
    return this.get(path`/v1/webhook_endpoints/${id}`, undefined, options)
  }
  update(
    id: string,
    params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}', 'patch'>,
    options?: RequestOptions,
  ): Promised<Schemas['WebhookEndpoint']> {
    return this.patch(path`/v1/webhook_endpoints/${id}`, params, options)
  }
  list(
    params?: ListParams<'/v1/webhook_endpoints'>,
    options?: RequestOptions,
  ): ListResult<Schemas['WebhookEndpoint']> {
    return this.pages('/v1/webhook_endpoints', params, options)
  }
  del(id: string, options?: RequestOptions): Promised<Schemas['WebhookEndpointDeleted']> {
    return this.delete(path`/v1/webhook_endpoints/${id}`, options)
  }
  /** A new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(
    id: string,
    params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['WebhookEndpoint']> {
    return this.post(path`/v1/webhook_endpoints/${id}/rotate_secret`, params, options)
  }
  listDeliveries(
    id: string,
    params?: ListParams<'/v1/webhook_endpoints/{webhook_endpoint_id}/deliveries'>,
    options?: RequestOptions,
  ): ListResult<Schemas['WebhookDelivery']> {
    return this.pages(path`/v1/webhook_endpoints/${id}/deliveries`, params, options)
  }
  /** Every retained event the endpoint takes since a time, again. */
  replay(
    id: string,
    params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}/replay', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Replay']> {
    return this.post(path`/v1/webhook_endpoints/${id}/replay`, params, options)
  }
  /** The `webhook_endpoint.test` event, to this endpoint only. */
  sendTest(
    id: string,
    params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}/test', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Event']> {
    return this.post(path`/v1/webhook_endpoints/${id}/test`, params, options)
  }
}

/** `/v1/events`: the organization's events of the token's environment (30 days). */
export class Events extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Event']> {
    return this.get(path`/v1/events/${id}`, undefined, options)
  }
  list(params?: ListParams<'/v1/events'>, options?: RequestOptions): ListResult<Schemas['Event']> {
    return this.pages('/v1/events', params, options)
  }
  /** Sends one stored event again, to one endpoint or to every endpoint subscribed to it (`svc events resend`). */
  replay(
    id: string,
    params: Body<'/v1/events/{event_id}/replay', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['Replay']> {
    return this.post(path`/v1/events/${id}/replay`, params, options)
  }
  /** The event's deliveries, one per endpoint and attempt, newest first (with the first 4 KiB of each answer). */
  listDeliveries(
    id: string,
    params?: ListParams<'/v1/events/{event_id}/deliveries'>,
    options?: RequestOptions,
  ): ListResult<Schemas['WebhookDelivery']> {
    return this.pages(path`/v1/events/${id}/deliveries`, params, options)
  }
}

/** `/v1/fx_rates`: the rate a spend in one currency converts into another at. */
export class FxRates extends Resource {
  /** `{ base, quote }`: base is the merchant's currency, quote the account's (`rate` is quote per base). */
  retrieve(
    params: ListParams<'/v1/fx_rates'>,
    options?: RequestOptions,
  ): Promised<Schemas['FxRate']> {
    return this.get('/v1/fx_rates', params, options)
  }
}

/** `/v1/reports`. */
export class Reports extends Resource {
  create(
    params: Body<'/v1/reports', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['Report']> {
    return this.post('/v1/reports', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Report']> {
    return this.get(path`/v1/reports/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/reports'>,
    options?: RequestOptions,
  ): ListResult<Schemas['Report']> {
    return this.pages('/v1/reports', params, options)
  }
  /** The report's file (CSV text) once it has succeeded. */
  async download(id: string, options?: RequestOptions): Promise<string> {
    return await this.core.request<string>({
      method: 'GET',
      path: path`/v1/reports/${id}/download`,
      options,
      text: true,
    })
  }
}

/** `/v1/oauth_clients`: the organization's other API clients. */
export class OAuthClients extends Resource {
  create(
    params: Body<'/v1/oauth_clients', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['OAuthClient']> {
    return this.post('/v1/oauth_clients', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['OAuthClient']> {
    return this.get(path`/v1/oauth_clients/${id}`, undefined, options)
  }
  update(
    id: string,
    params: Body<'/v1/oauth_clients/{oauth_client_id}', 'patch'>,
    options?: RequestOptions,
  ): Promised<Schemas['OAuthClient']> {
    return this.patch(path`/v1/oauth_clients/${id}`, params, options)
  }
  list(
    params?: ListParams<'/v1/oauth_clients'>,
    options?: RequestOptions,
  ): ListResult<Item<'/v1/oauth_clients'>> {
    return this.pages('/v1/oauth_clients', params, options)
  }
  revoke(
    id: string,
    params: Body<'/v1/oauth_clients/{oauth_client_id}/revoke', 'post'> = {} as never,
    options?: RequestOptions,
  ): Promised<Schemas['OAuthClient']> {
    return this.post(path`/v1/oauth_clients/${id}/revoke`, params, options)
  }
}

/**
 * `/v1/authorization_endpoint` (decisions: "Authorization decided by the integrator"): one per environment, asked to
 * approve each authorization the service's own rules would approve. Answer its requests with `answerAuthorizationRequest`.
 */
export type AuthorizationEndpoint = Schemas['AuthorizationEndpoint']
export type AuthorizationEndpointParams = Body<'/v1/authorization_endpoint', 'put'>
/** One call the service made to the endpoint (kept 30 days). */
export type AuthorizationEndpointAttempt = Schemas['AuthorizationEndpointAttempt']

export class AuthorizationEndpointResource extends Resource {
  /** Registers the endpoint or changes it (`PUT`); when it creates one, the answer carries its `secret` (`whsec_…`), shown only then and by `rotateSecret`. */
  update(
    params: AuthorizationEndpointParams,
    options?: RequestOptions,
  ): Promised<AuthorizationEndpoint> {
    return this.put('/v1/authorization_endpoint', params, options)
  }
  /** The endpoint, without its secret (`404 not_found` when none is registered). */
  retrieve(options?: RequestOptions): Promised<AuthorizationEndpoint> {
    return this.get('/v1/authorization_endpoint', undefined, options)
  }
  /** Removes it: the service decides alone again. */
  del(options?: RequestOptions): Promised<Schemas['AuthorizationEndpointDeleted']> {
    return this.delete('/v1/authorization_endpoint', options)
  }
  /** A new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(options?: RequestOptions): Promised<AuthorizationEndpoint> {
    return this.post('/v1/authorization_endpoint/rotate_secret', {}, options)
  }
  /** The calls made to the endpoint, newest first. */
  listAttempts(
    params?: ListParams<'/v1/authorization_endpoint/attempts'>,
    options?: RequestOptions,
  ): ListResult<AuthorizationEndpointAttempt> {
    return this.pages('/v1/authorization_endpoint/attempts', params, options)
  }
}
