import { path } from '../core.js'
import type { ListResult } from '../pagination.js'
import type { Body, Item, ListParams, Schemas } from '../types.js'
import { Resource, type Promised, type RequestOptions } from './base.js'

/** `/v1/webhook_endpoints`: endpoints, their delivery log, replays and the test event. */
export class WebhookEndpoints extends Resource {
  /** The answer carries `secret` (`whsec_…`): keep it, it is shown only here and by `rotateSecret`. */
  create(params: Body<'/v1/webhook_endpoints', 'post'>, options?: RequestOptions): Promised<Schemas['WebhookEndpoint']> {
    return this.post('/v1/webhook_endpoints', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['WebhookEndpoint']> {
    return this.get(path`/v1/webhook_endpoints/${id}`, undefined, options)
  }
  update(id: string, params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}', 'patch'>, options?: RequestOptions): Promised<Schemas['WebhookEndpoint']> {
    return this.patch(path`/v1/webhook_endpoints/${id}`, params, options)
  }
  list(params?: ListParams<'/v1/webhook_endpoints'>, options?: RequestOptions): ListResult<Schemas['WebhookEndpoint']> {
    return this.pages('/v1/webhook_endpoints', params, options)
  }
  del(id: string, options?: RequestOptions): Promised<Schemas['WebhookEndpointDeleted']> {
    return this.delete(path`/v1/webhook_endpoints/${id}`, options)
  }
  /** A new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(id: string, params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret', 'post'> = {} as never, options?: RequestOptions): Promised<Schemas['WebhookEndpoint']> {
    return this.post(path`/v1/webhook_endpoints/${id}/rotate_secret`, params, options)
  }
  listDeliveries(id: string, params?: ListParams<'/v1/webhook_endpoints/{webhook_endpoint_id}/deliveries'>, options?: RequestOptions): ListResult<Schemas['WebhookDelivery']> {
    return this.pages(path`/v1/webhook_endpoints/${id}/deliveries`, params, options)
  }
  /** Every retained event the endpoint takes since a time, again. */
  replay(id: string, params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}/replay', 'post'>, options?: RequestOptions): Promised<Schemas['Replay']> {
    return this.post(path`/v1/webhook_endpoints/${id}/replay`, params, options)
  }
  /** The `webhook_endpoint.test` event, to this endpoint only. */
  sendTest(id: string, params: Body<'/v1/webhook_endpoints/{webhook_endpoint_id}/test', 'post'> = {} as never, options?: RequestOptions): Promised<Schemas['Event']> {
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
  replay(id: string, params: Body<'/v1/events/{event_id}/replay', 'post'> = {} as never, options?: RequestOptions): Promised<Schemas['Replay']> {
    return this.post(path`/v1/events/${id}/replay`, params, options)
  }
}

/** `/v1/reports`. */
export class Reports extends Resource {
  create(params: Body<'/v1/reports', 'post'>, options?: RequestOptions): Promised<Schemas['Report']> {
    return this.post('/v1/reports', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Report']> {
    return this.get(path`/v1/reports/${id}`, undefined, options)
  }
  list(params?: ListParams<'/v1/reports'>, options?: RequestOptions): ListResult<Schemas['Report']> {
    return this.pages('/v1/reports', params, options)
  }
  /** The report's file (CSV text) once it has succeeded. */
  async download(id: string, options?: RequestOptions): Promise<string> {
    return await this.core.request<string>({ method: 'GET', path: path`/v1/reports/${id}/download`, options, text: true })
  }
}

/** `/v1/oauth_clients`: the organization's other API clients. */
export class OAuthClients extends Resource {
  create(params: Body<'/v1/oauth_clients', 'post'>, options?: RequestOptions): Promised<Schemas['OAuthClient']> {
    return this.post('/v1/oauth_clients', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['OAuthClient']> {
    return this.get(path`/v1/oauth_clients/${id}`, undefined, options)
  }
  update(id: string, params: Body<'/v1/oauth_clients/{oauth_client_id}', 'patch'>, options?: RequestOptions): Promised<Schemas['OAuthClient']> {
    return this.patch(path`/v1/oauth_clients/${id}`, params, options)
  }
  list(params?: ListParams<'/v1/oauth_clients'>, options?: RequestOptions): ListResult<Item<'/v1/oauth_clients'>> {
    return this.pages('/v1/oauth_clients', params, options)
  }
  revoke(id: string, params: Body<'/v1/oauth_clients/{oauth_client_id}/revoke', 'post'> = {} as never, options?: RequestOptions): Promised<Schemas['OAuthClient']> {
    return this.post(path`/v1/oauth_clients/${id}/revoke`, params, options)
  }
}

/**
 * The authorization endpoint (decisions: "Authorization decided by the integrator"): one per environment, asked to
 * approve each authorization the service's own rules would approve. Written against the documented shape
 * (`PUT`/`GET`/`DELETE /v1/authorization_endpoint`, `POST …/rotate_secret`, `GET …/attempts`); its types are
 * hand-written here until the routes are in the OpenAPI document the generated types come from.
 */
export interface AuthorizationEndpoint {
  object: 'authorization_endpoint'
  url: string
  timeout_ms: number
  stand_in: 'decline' | 'approve'
  /** `whsec_…`: in the answers of `update` (when created) and `rotateSecret` only. */
  secret?: string
  status: string
  [field: string]: unknown
}

export interface AuthorizationEndpointParams {
  url: string
  /** 100–2000 (default 1500). */
  timeout_ms?: number
  /** What happens when the endpoint does not answer in time or answers badly (default `decline`). */
  stand_in?: 'decline' | 'approve'
}

/** One call the service made to the endpoint. */
export interface AuthorizationEndpointAttempt {
  object: string
  [field: string]: unknown
}

export class AuthorizationEndpointResource extends Resource {
  /** Registers or replaces the endpoint (`PUT`). */
  update(params: AuthorizationEndpointParams, options?: RequestOptions): Promised<AuthorizationEndpoint> {
    return this.put('/v1/authorization_endpoint', params, options)
  }
  retrieve(options?: RequestOptions): Promised<AuthorizationEndpoint> {
    return this.get('/v1/authorization_endpoint', undefined, options)
  }
  del(options?: RequestOptions): Promised<Record<string, unknown>> {
    return this.delete('/v1/authorization_endpoint', options)
  }
  rotateSecret(options?: RequestOptions): Promised<AuthorizationEndpoint> {
    return this.post('/v1/authorization_endpoint/rotate_secret', {}, options)
  }
  listAttempts(params?: { limit?: number; starting_after?: string; ending_before?: string }, options?: RequestOptions): ListResult<AuthorizationEndpointAttempt> {
    return this.pages('/v1/authorization_endpoint/attempts', params, options)
  }
}
