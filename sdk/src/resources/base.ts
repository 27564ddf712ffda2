import type { RequestOptions, SvcCore, WithResponse } from '../core.js'
import type { ListResult } from '../pagination.js'

export type { RequestOptions }
export type Promised<T> = Promise<WithResponse<T>>

/** What every resource holds: the transport. Methods follow stripe-node: create, retrieve, update, list, del, verbs. */
export abstract class Resource {
  constructor(protected readonly core: SvcCore) {}

  protected get<T>(path: string, query?: object, options?: RequestOptions): Promised<T> {
    return this.core.request<T>({ method: 'GET', path, query, options })
  }

  protected post<T>(path: string, body: unknown = {}, options?: RequestOptions): Promised<T> {
    return this.core.request<T>({ method: 'POST', path, body, options })
  }

  protected patch<T>(path: string, body: unknown, options?: RequestOptions): Promised<T> {
    return this.core.request<T>({ method: 'PATCH', path, body, options })
  }

  protected put<T>(path: string, body: unknown, options?: RequestOptions): Promised<T> {
    return this.core.request<T>({ method: 'PUT', path, body, options })
  }

  protected delete<T>(path: string, options?: RequestOptions): Promised<T> {
    return this.core.request<T>({ method: 'DELETE', path, options })
  }

  protected pages<T>(path: string, params?: object, options?: RequestOptions): ListResult<T> {
    return this.core.list<T>(path, params, options)
  }
}
