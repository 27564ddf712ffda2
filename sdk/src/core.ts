import { randomUUID } from 'node:crypto'
import {
  loadSigningKey,
  signAssertion,
  TokenCache,
  type PrivateKeyInput,
  type SigningAlgorithm,
  type SigningKey,
} from './auth.js'
import { SvcConnectionError, SvcError } from './errors.js'
import { ListResult, type Page } from './pagination.js'

export interface SvcConfig {
  /** The OAuth client id (`oc_…`). */
  clientId: string
  /** The client's private key: JWK (its `kid` is used), PEM or `KeyObject`; EC P-256 signs ES256, RSA signs RS256. */
  privateKey: PrivateKeyInput
  /** The service's address, e.g. `https://api.example.com` (no trailing `/v1`). */
  baseUrl: string
  /** Scopes to ask for (default: every scope the client holds). */
  scopes?: string[]
  /** The key id to put in assertions when the key is not a JWK carrying one. */
  keyId?: string
  algorithm?: SigningAlgorithm
  /** Retries after the first attempt on network errors, 429, 409 `idempotency_request_in_progress` and 5xx (default 2). */
  maxRetries?: number
  /** Per-attempt timeout in milliseconds (default 60,000). */
  timeoutMs?: number
  /** First retry delay in milliseconds, doubled each retry (default 500). */
  initialRetryDelayMs?: number
  /** Cap of one backoff delay in milliseconds (default 8,000); a Retry-After is honoured up to 60 s. */
  maxRetryDelayMs?: number
  /** Now, in milliseconds since the epoch (default `Date.now`): the token's expiry and the assertions' `iat` are read from it. */
  clock?: () => number
  /** How a retry waits (tests). */
  sleep?: (ms: number) => Promise<void>
  /** The `fetch` to use (default the global one). */
  fetch?: typeof fetch
  /** Extra `User-Agent` text. */
  appInfo?: string
}

/** Per-call options, the last argument of every resource method. */
export interface RequestOptions {
  /** Sent as `Idempotency-Key` (POST and PATCH); generated when absent, and the same on every retry of the call. */
  idempotencyKey?: string
  maxRetries?: number
  timeoutMs?: number
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** What the service answered besides the body; attached to every returned object as the non-enumerable `lastResponse`. */
export interface ResponseInfo {
  status: number
  requestId?: string
  headers: Record<string, string>
  idempotencyKey?: string
  /** True when the service answered a stored answer for the Idempotency-Key (`Idempotent-Replay: true`). */
  idempotentReplay: boolean
  /** Attempts made (1 without retries). */
  attempts: number
}

export type WithResponse<T> = T & { readonly lastResponse?: ResponseInfo }

type Query = Record<string, string | number | boolean | undefined | null>

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  query?: object
  body?: unknown
  options?: RequestOptions
  /** Answer the body as text (CSV downloads). */
  text?: boolean
}

const RETRYABLE_409 = 'idempotency_request_in_progress'
const SDK_VERSION = '1.0.0'

/** The transport every resource calls: token, idempotency key, retries with backoff, typed errors. */
export class SvcCore {
  readonly baseUrl: string
  readonly tokenUrl: string
  private readonly signing: SigningKey
  private readonly tokens: TokenCache
  private readonly now: () => number
  private readonly sleep: (ms: number) => Promise<void>
  private readonly doFetch: typeof fetch
  private readonly userAgent: string

  constructor(readonly config: SvcConfig) {
    if (!config.clientId) throw new TypeError('clientId is required')
    if (!config.baseUrl) throw new TypeError('baseUrl is required')
    this.baseUrl = config.baseUrl.replace(/\/+$/, '')
    this.tokenUrl = `${this.baseUrl}/oauth/token`
    this.signing = loadSigningKey(config.privateKey, {
      keyId: config.keyId,
      algorithm: config.algorithm,
    })
    this.now = config.clock ?? Date.now
    this.sleep = config.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)))
    this.doFetch = config.fetch ?? ((input, init) => fetch(input, init))
    this.userAgent = `svc-sdk-node/${SDK_VERSION}${config.appInfo ? ` ${config.appInfo}` : ''}`
    this.tokens = new TokenCache(this.now, () => this.requestToken())
  }

  /** A fresh access token from the token endpoint (private_key_jwt), with the same retries as any call. */
  private async requestToken(): Promise<{ accessToken: string; expiresIn: number }> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    })
    if (this.config.scopes?.length) form.set('scope', this.config.scopes.join(' '))
    const { body } = await this.send<{ access_token: string; expires_in: number }>(
      { method: 'POST', path: '/oauth/token' },
      async () => {
        // A new assertion each attempt: its jti is single-use.
        form.set(
          'client_assertion',
          await signAssertion(
            this.signing,
            this.config.clientId,
            this.tokenUrl,
            Math.floor(this.now() / 1000),
          ),
        )
        return {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        }
      },
    )
    return { accessToken: body.access_token, expiresIn: body.expires_in }
  }

  /** The access token in use (fetched when none is held or it expires within 60 s). */
  accessToken(): Promise<string> {
    return this.tokens.get()
  }

  /** One API call; a `401 invalid_access_token` refreshes the token once and repeats the call. */
  async request<T>(spec: RequestSpec): Promise<WithResponse<T>> {
    const idempotencyKey =
      spec.method === 'POST' || spec.method === 'PATCH'
        ? (spec.options?.idempotencyKey ?? randomUUID())
        : undefined
    let refreshed = false
    for (;;) {
      const token = await this.tokens.get()
      try {
        const { body, info } = await this.send<T>(
          spec,
          async () => ({
            headers: {
              authorization: `Bearer ${token}`,
              ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
              ...(spec.body !== undefined || spec.method === 'POST'
                ? { 'content-type': 'application/json' }
                : {}),
            },
            body:
              spec.body !== undefined
                ? JSON.stringify(spec.body)
                : spec.method === 'POST'
                  ? '{}'
                  : undefined,
          }),
          idempotencyKey,
        )
        if (body !== null && typeof body === 'object')
          Object.defineProperty(body, 'lastResponse', {
            value: info,
            enumerable: false,
            configurable: true,
          })
        return body as WithResponse<T>
      } catch (err) {
        if (
          !refreshed &&
          err instanceof SvcError &&
          err.status === 401 &&
          err.code === 'invalid_access_token'
        ) {
          refreshed = true
          this.tokens.invalidate(token)
          continue
        }
        throw err
      }
    }
  }

  /**
   * A long-lived GET (server-sent events): the open response, its body not read. A `401 invalid_access_token`
   * refreshes the token once; other refusals throw their `SvcError`, a connection failure `SvcConnectionError`.
   */
  async openStream(
    path: string,
    query: object,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    for (let refreshed = false; ; refreshed = true) {
      const token = await this.tokens.get()
      let res: Response
      try {
        res = await this.doFetch(this.url(path, query), {
          method: 'GET',
          signal,
          headers: {
            accept: 'text/event-stream',
            'user-agent': this.userAgent,
            authorization: `Bearer ${token}`,
            ...headers,
          },
        })
      } catch (err) {
        if (signal?.aborted) throw err
        const cause = (err as { cause?: { code?: string; message?: string } }).cause
        throw new SvcConnectionError({
          message: `cannot reach the service at ${this.baseUrl} (GET ${path}): ${cause?.code ?? cause?.message ?? (err as Error).message}`,
          type: 'connection_error',
          cause: err,
        })
      }
      if (res.ok) return res
      const responseHeaders: Record<string, string> = {}
      res.headers.forEach((value, name) => {
        responseHeaders[name] = value
      })
      const text = await res.text().catch(() => '')
      let parsed: unknown = text
      try {
        parsed = text ? JSON.parse(text) : null
      } catch {
        /* kept as text */
      }
      const error = SvcError.fromResponse(res.status, parsed, responseHeaders)
      if (!refreshed && error.status === 401 && error.code === 'invalid_access_token') {
        this.tokens.invalidate(token)
        continue
      }
      throw error
    }
  }

  /** Delay before the `attempt`-th retry: exponential, capped, with jitter. */
  retryBackoff(attempt: number): number {
    return this.backoff(attempt)
  }

  /** A list that pages itself: each page is a GET with `starting_after` set to the previous page's `next_cursor`. */
  list<T>(path: string, params: object = {}, options?: RequestOptions): ListResult<T> {
    return new ListResult<T>((startingAfter) =>
      this.request<Page<T>>({
        method: 'GET',
        path,
        query: startingAfter
          ? { ...params, starting_after: startingAfter, ending_before: undefined }
          : params,
        options,
      }),
    )
  }

  private url(path: string, query?: object): string {
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries((query ?? {}) as Query))
      if (v !== undefined && v !== null) search.append(k, String(v))
    const qs = search.toString()
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`
  }

  /** Attempts with retries; `prepare` builds each attempt's headers and body. */
  private async send<T>(
    spec: RequestSpec,
    prepare: () => Promise<{ headers: Record<string, string>; body?: string }>,
    idempotencyKey?: string,
  ): Promise<{ body: T; info: ResponseInfo }> {
    const maxRetries = spec.options?.maxRetries ?? this.config.maxRetries ?? 2
    const timeoutMs = spec.options?.timeoutMs ?? this.config.timeoutMs ?? 60_000
    const url = this.url(spec.path, spec.query)
    for (let attempt = 1; ; attempt++) {
      const { headers, body } = await prepare()
      let res: Response
      try {
        const signals = [
          AbortSignal.timeout(timeoutMs),
          ...(spec.options?.signal ? [spec.options.signal] : []),
        ]
        res = await this.doFetch(url, {
          method: spec.method,
          headers: {
            accept: 'application/json',
            'user-agent': this.userAgent,
            ...headers,
            ...spec.options?.headers,
          },
          body,
          signal: AbortSignal.any(signals),
        })
      } catch (err) {
        if (spec.options?.signal?.aborted) throw err
        if (attempt <= maxRetries) {
          await this.sleep(this.backoff(attempt))
          continue
        }
        const cause = (err as { cause?: { code?: string; message?: string } }).cause
        throw new SvcConnectionError({
          message:
            `cannot reach the service at ${this.baseUrl} (${spec.method} ${spec.path}): ${cause?.code ?? cause?.message ?? (err as Error).message}` +
            (attempt > 1 ? ` after ${attempt} attempts` : ''),
          type: 'connection_error',
          cause: err,
        })
      }
      const responseHeaders: Record<string, string> = {}
      res.headers.forEach((value, name) => {
        responseHeaders[name] = value
      })
      const text = await res.text().catch(() => '')
      let parsed: unknown = text
      if (!spec.text || !res.ok) {
        try {
          parsed = text ? JSON.parse(text) : null
        } catch {
          parsed = text
        }
      }
      if (res.ok) {
        return {
          body: parsed as T,
          info: {
            status: res.status,
            requestId: responseHeaders['svc-request-id'],
            headers: responseHeaders,
            idempotencyKey,
            idempotentReplay: responseHeaders['idempotent-replay'] === 'true',
            attempts: attempt,
          },
        }
      }
      const error = SvcError.fromResponse(res.status, parsed, responseHeaders)
      const retryable =
        res.status === 429 ||
        res.status >= 500 ||
        (res.status === 409 && error.code === RETRYABLE_409)
      if (!retryable || attempt > maxRetries) throw error
      await this.sleep(this.retryDelay(attempt, responseHeaders['retry-after']))
    }
  }

  /** Exponential backoff with jitter: 0.5–1 × initial × 2^(attempt−1), capped. */
  private backoff(attempt: number): number {
    const initial = this.config.initialRetryDelayMs ?? 500
    const cap = this.config.maxRetryDelayMs ?? 8_000
    const delay = Math.min(cap, initial * 2 ** (attempt - 1))
    return Math.round(delay * (0.5 + Math.random() / 2))
  }

  /** Retry-After (seconds or an HTTP date) when the service sent one (at most 60 s), else the backoff. */
  private retryDelay(attempt: number, retryAfter: string | undefined): number {
    if (retryAfter !== undefined) {
      const seconds = /^\d+$/.test(retryAfter.trim())
        ? Number(retryAfter)
        : (Date.parse(retryAfter) - this.now()) / 1000
      if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 60_000)
    }
    return this.backoff(attempt)
  }
}

/** `/a/{id}/b` with the id escaped. */
export function path(strings: TemplateStringsArray, ...ids: string[]): string {
  return strings.reduce(
    (out, s, i) => out + s + (i < ids.length ? encodeURIComponent(ids[i]) : ''),
    '',
  )
}
