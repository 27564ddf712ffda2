import { path } from '../core.js'
import type { ListResult } from '../pagination.js'
import type { Body, ListParams, Schemas } from '../types.js'
import { Resource, type Promised, type RequestOptions } from './base.js'

/** `/v1/esim/packages`: the catalogue of data packages. */
export class EsimPackages extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['EsimPackage']> {
    return this.get(path`/v1/esim/packages/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/esim/packages'>,
    options?: RequestOptions,
  ): ListResult<Schemas['EsimPackage']> {
    return this.pages('/v1/esim/packages', params, options)
  }
}

/** `/v1/esim/orders`: buying a package provisions an eSIM. */
export class EsimOrders extends Resource {
  create(
    params: Body<'/v1/esim/orders', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['EsimOrder']> {
    return this.post('/v1/esim/orders', params, options)
  }
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['EsimOrder']> {
    return this.get(path`/v1/esim/orders/${id}`, undefined, options)
  }
  list(
    params?: ListParams<'/v1/esim/orders'>,
    options?: RequestOptions,
  ): ListResult<Schemas['EsimOrder']> {
    return this.pages('/v1/esim/orders', params, options)
  }
}

/** `/v1/esim/esims`. */
export class Esims extends Resource {
  retrieve(id: string, options?: RequestOptions): Promised<Schemas['Esim']> {
    return this.get(path`/v1/esim/esims/${id}`, undefined, options)
  }
  /** The eSIM's own alert settings and its auto top-up (each field given replaces its own). */
  update(
    id: string,
    params: Body<'/v1/esim/esims/{esim_id}', 'patch'>,
    options?: RequestOptions,
  ): Promised<Schemas['Esim']> {
    return this.patch(path`/v1/esim/esims/${id}`, params, options)
  }
  /**
   * Auto top-up from stored value: buys `top_up_id` from `account_id` once each time usage crosses the trigger, at most
   * `max_per_month` times a month; `null` turns it off (`PATCH` with `auto_top_up`).
   */
  setAutoTopUp(
    id: string,
    autoTopUp: NonNullable<Body<'/v1/esim/esims/{esim_id}', 'patch'>['auto_top_up']> | null,
    options?: RequestOptions,
  ): Promised<Schemas['Esim']> {
    return this.patch(path`/v1/esim/esims/${id}`, { auto_top_up: autoTopUp }, options)
  }
  /** Cancels an eSIM never installed nor used; its orders are refunded. */
  cancel(id: string, options?: RequestOptions): Promised<Schemas['Esim']> {
    return this.post(path`/v1/esim/esims/${id}/cancel`, {}, options)
  }
  suspend(id: string, options?: RequestOptions): Promised<Schemas['Esim']> {
    return this.post(path`/v1/esim/esims/${id}/suspend`, {}, options)
  }
  resume(id: string, options?: RequestOptions): Promised<Schemas['Esim']> {
    return this.post(path`/v1/esim/esims/${id}/resume`, {}, options)
  }
  list(
    params?: ListParams<'/v1/esim/esims'>,
    options?: RequestOptions,
  ): ListResult<Schemas['EsimSummary']> {
    return this.pages('/v1/esim/esims', params, options)
  }
}

/** `/v1/esim/esims/{id}/top_ups`: add-ons offered for an eSIM, and buying one. */
export class EsimTopUps extends Resource {
  /** Buys an add-on: answers the order it makes. */
  create(
    esimId: string,
    params: Body<'/v1/esim/esims/{esim_id}/top_ups', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['EsimOrder']> {
    return this.post(path`/v1/esim/esims/${esimId}/top_ups`, params, options)
  }
  list(
    esimId: string,
    params?: ListParams<'/v1/esim/esims/{esim_id}/top_ups'>,
    options?: RequestOptions,
  ): ListResult<Schemas['EsimTopUp']> {
    return this.pages(path`/v1/esim/esims/${esimId}/top_ups`, params, options)
  }
}

/** `/v1/esim/alert_settings`: the organization's usage thresholds and validity warnings. */
export class EsimAlertSettings extends Resource {
  retrieve(options?: RequestOptions): Promised<Schemas['EsimAlertSettings']> {
    return this.get('/v1/esim/alert_settings', undefined, options)
  }
  update(
    params: Body<'/v1/esim/alert_settings', 'put'>,
    options?: RequestOptions,
  ): Promised<Schemas['EsimAlertSettings']> {
    return this.put('/v1/esim/alert_settings', params, options)
  }
}

/** `/v1/esim/h5_links`: a link to a cardholder's traveller page (eSIMs, cards, balance). */
export class EsimH5Links extends Resource {
  create(
    params: Body<'/v1/esim/h5_links', 'post'>,
    options?: RequestOptions,
  ): Promised<Schemas['EsimH5Link']> {
    return this.post('/v1/esim/h5_links', params, options)
  }
}

/** `svc.esim.*`. */
export class EsimNamespace {
  readonly packages: EsimPackages
  readonly orders: EsimOrders
  readonly esims: Esims
  readonly topUps: EsimTopUps
  readonly h5Links: EsimH5Links
  readonly alertSettings: EsimAlertSettings
  constructor(core: ConstructorParameters<typeof EsimPackages>[0]) {
    this.packages = new EsimPackages(core)
    this.orders = new EsimOrders(core)
    this.esims = new Esims(core)
    this.topUps = new EsimTopUps(core)
    this.h5Links = new EsimH5Links(core)
    this.alertSettings = new EsimAlertSettings(core)
  }
}
