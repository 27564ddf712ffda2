import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { sha256Hex } from '../lib/crypto.js'
import { newId } from '../lib/ids.js'
import { ApiError, isApiError } from './errors.js'
import { idOfAnotherKind } from './id-hints.js'
import type { MethodIndex } from './method-index.js'
import { validationToApiError } from './validation.js'

export interface ErrorEnvelope {
  error: {
    type: string
    code: string
    message: string
    param?: string
    doc_url: string
    request_id: string
    errors?: { code: string; param: string; message: string }[]
  }
}

/** The `/v1` error envelope for an ApiError. */
export function envelope(err: ApiError, requestId: string, baseUrl: string): ErrorEnvelope {
  return {
    error: {
      type: err.spec.type,
      code: err.code,
      message: err.message,
      ...(err.param !== undefined ? { param: err.param } : {}),
      doc_url: `${baseUrl}/docs/errors#${err.code}`,
      request_id: requestId,
      ...(err.errors ? { errors: err.errors } : {}),
    },
  }
}

/** Maps framework errors (body parsing, size, validation) onto catalogue codes; anything else is internal. */
export function toApiError(err: unknown): ApiError | null {
  if (isApiError(err)) return err
  const e = err as FastifyError & { validation?: unknown[]; validationContext?: string }
  if (e && Array.isArray(e.validation))
    return validationToApiError(e.validation as never, e.validationContext)
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('request_too_large')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError('invalid_request_body')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new ApiError('not_found')
  }
  if (e && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode === 413 ? 'request_too_large' : 'invalid_request_body')
  }
  return null
}

/** A not-found whose path holds an id of another kind says so (`chd_… is a cardholder id; …`). */
function withIdHint(err: ApiError, params: unknown): ApiError {
  if (err.status !== 404) return err
  const hint = idOfAnotherKind(err.code, params)
  if (hint === null) return err
  const { param, errors, headers, detail } = err
  return new ApiError(err.code, { message: hint, param, errors, headers, detail })
}

export function sendApiError(reply: FastifyReply, err: ApiError, baseUrl: string): FastifyReply {
  if (err.headers) reply.headers(err.headers)
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(envelope(err, String(reply.request.id), baseUrl))
}

/** One place where every failure becomes the envelope; unknown exceptions are logged with their stack and answered as internal_error. */
export function installErrorHandling(app: FastifyInstance, baseUrl: string): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(err)
    if (apiError) {
      if (apiError.status >= 500) req.log.error({ err, detail: apiError.detail }, 'request failed')
      return sendApiError(reply, withIdHint(apiError, req.params), baseUrl)
    }
    req.log.error({ err }, 'unhandled error')
    return sendApiError(reply, new ApiError('internal_error'), baseUrl)
  })
  app.setNotFoundHandler((req, reply) => sendApiError(reply, new ApiError('not_found'), baseUrl))
}

/**
 * Answers an unmatched path or method right after authentication, before the body is read: an unknown
 * path then looks exactly like an unmounted operation (which never reads its body either), whatever is sent.
 */
export function installNotFoundGate(app: FastifyInstance, methods: MethodIndex): void {
  app.addHook('onRequest', async (req) => {
    if (req.is404) throw unrouted(req.method, req.url, methods, req.ctx?.environment === 'sandbox')
  })
}

/**
 * What a request no route takes is told: `405 method_not_allowed` with `Allow` when its path takes other methods
 * (a `PUT` on a card), else `not_found`.
 */
export function unrouted(
  method: string,
  url: string,
  methods: MethodIndex,
  sandbox: boolean,
): ApiError {
  const allowed = methods.methodsOf(url, sandbox).filter((m) => m !== method)
  if (allowed.length === 0) return new ApiError('not_found')
  const path = url.split('?', 1)[0]
  return new ApiError('method_not_allowed', {
    message: `${path} does not take ${method}; it takes ${allowed.join(', ')}.`,
    headers: { Allow: allowed.join(', ') },
  })
}

/**
 * Node hands a CONNECT request (a proxy's tunnel) to the server's `connect` listeners and, with none, drops the
 * connection without a word. The service is no proxy: the request goes through the app's routing like any other
 * method, so it gets the answer any other method gets on that path, in the envelope; then the connection closes.
 */
export function installConnectAnswer(app: FastifyInstance): void {
  app.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    // Node no longer watches a socket it handed over: its errors (a client that resets) are ours to absorb.
    socket.on('error', () => socket.destroy())
    const res = new ServerResponse(req)
    res.shouldKeepAlive = false
    res.assignSocket(socket as Socket)
    res.once('finish', () => socket.end())
    app.routing(req, res)
  })
}

/**
 * Fastify's `frameworkErrors`: failures before routing (a malformed percent-escape, an over-long path
 * parameter) get the same envelope and Svc-Request-Id as everything else instead of Fastify's raw body.
 */
export function frameworkErrorHandler(baseUrl: string) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.header('Svc-Request-Id', req.id)
    return sendApiError(reply, toApiError(err) ?? new ApiError('not_found'), baseUrl)
  }
}

/** The token endpoint's request line, as far as the parser got: its refusals keep the flat OAuth shape. */
const TOKEN_REQUEST_LINE = /^[A-Z]+ \/oauth\/token(?:[ ?#]|$)/
const TOKEN_PATH = /^\/oauth\/token(?:[?#]|$)/

/** The time limits node enforces on a request (config REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS). */
export interface RequestTimeLimits {
  requestTimeoutMs: number
  headersTimeoutMs: number
}

const duration = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`)

/** Writes a complete HTTP/1.1 answer on a socket no response owns, then closes the connection once it is flushed. */
function answerOnSocket(
  socket: Duplex,
  status: number,
  body: string,
  requestId: string,
  extraHeaders = '',
): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n${extraHeaders}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nSvc-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  )
}

/**
 * Node's request timeout fired: the headers did not arrive within `headersTimeoutMs`, or the body not within
 * `requestTimeoutMs`. Unless the application already started its own answer, `408 request_timeout` in the
 * envelope (at the token endpoint the flat OAuth shape), then the connection is closed.
 */
function answerTimeout(socket: Duplex, baseUrl: string, limits: RequestTimeLimits): void {
  // The response of the request being received, if its headers arrived (node's own check before it answers 408).
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? null
  if (pending?.headersSent) {
    socket.destroy()
    return
  }
  const requestId = newId('req')
  const message = pending
    ? `The request body did not arrive within ${duration(limits.requestTimeoutMs)}; the connection is closed.`
    : `The request line and headers did not arrive within ${duration(limits.headersTimeoutMs)}; the connection is closed.`
  if (pending && TOKEN_PATH.test(pending.req?.url ?? '')) {
    answerOnSocket(
      socket,
      408,
      JSON.stringify({ error: 'invalid_request', error_description: message }),
      requestId,
      'Cache-Control: no-store\r\nPragma: no-cache\r\n',
    )
    return
  }
  answerOnSocket(
    socket,
    408,
    JSON.stringify(envelope(new ApiError('request_timeout', { message }), requestId, baseUrl)),
    requestId,
  )
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refused before any route saw it. Headers and
 * request line over Node's 16 KiB (a long query string counts) answer `431 request_header_too_large`, any
 * other malformed HTTP `400 invalid_request_body`, both in the envelope; at the token endpoint (when the
 * packet shows its request line) `400 invalid_request` in the flat OAuth shape instead. A request that did
 * not arrive in time answers `408 request_timeout` (see answerTimeout). The connection is then closed.
 */
export function clientErrorHandler(baseUrl: string, limits: RequestTimeLimits) {
  return (err: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
      socket.destroy()
      return
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answerTimeout(socket, baseUrl, limits)
      return
    }
    const overflow = err.code === 'HPE_HEADER_OVERFLOW'
    const requestId = newId('req')
    if (
      Buffer.isBuffer(err.rawPacket) &&
      TOKEN_REQUEST_LINE.test(err.rawPacket.toString('latin1', 0, 64))
    ) {
      const body = JSON.stringify({
        error: 'invalid_request',
        error_description: overflow
          ? 'The request line and headers exceed 16 KiB.'
          : 'The token request is malformed.',
      })
      answerOnSocket(
        socket,
        400,
        body,
        requestId,
        'Cache-Control: no-store\r\nPragma: no-cache\r\n',
      )
      return
    }
    const apiError = overflow
      ? new ApiError('request_header_too_large')
      : new ApiError('invalid_request_body', { message: 'The HTTP request is malformed.' })
    answerOnSocket(
      socket,
      apiError.status,
      JSON.stringify(envelope(apiError, requestId, baseUrl)),
      requestId,
    )
  }
}

/** Like Fastify's own parser: `__proto__` keys and `constructor.prototype` objects are refused outright. */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  const poisoned =
    key === '__proto__' ||
    (key === 'constructor' &&
      value !== null &&
      typeof value === 'object' &&
      Object.hasOwn(value, 'prototype'))
  if (poisoned)
    throw new ApiError('invalid_request_body', {
      message: 'The request body contains a forbidden key.',
    })
  return value
}

/**
 * A body the parser refused, standing in for it until preValidation: the Idempotency-Key hook records the
 * refusal under the key like any other answer (`hash` identifies the raw body), then it is thrown.
 */
export class UnparsableBody {
  constructor(
    readonly error: ApiError,
    readonly hash: string,
  ) {}
}

function unparsable(
  message: string,
  raw: string | Buffer,
  contentType: string | undefined,
): UnparsableBody {
  return new UnparsableBody(
    new ApiError('invalid_request_body', { message }),
    sha256Hex(Buffer.concat([Buffer.from(`${contentType ?? ''}\n`), Buffer.from(raw)])),
  )
}

/** Deeper JSON is refused before it is parsed: walking it (validation, idempotency hashing) would exhaust the stack. */
export const MAX_JSON_DEPTH = 64

/** Whether arrays and objects nest deeper than `max` in a JSON text; strings are skipped with indexOf (base64 documents stay cheap). */
function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      for (;;) {
        const end = text.indexOf('"', i + 1)
        if (end === -1) return false // unterminated: JSON.parse refuses it
        let backslashes = 0
        for (let j = end - 1; text.charCodeAt(j) === 92; j--) backslashes++
        i = end
        if (backslashes % 2 === 0) break
      }
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return false
}

/** JSON bodies only: empty means "no body"; anything but a JSON object is invalid_request_body. */
export function installJsonParsing(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = (body as string).trim()
    if (text === '') return done(null, undefined)
    const contentType = req.headers['content-type']
    if (text.length > 2 * MAX_JSON_DEPTH && nestedDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        null,
        unparsable(
          `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
          text,
          contentType,
        ),
      )
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(
        text,
        /__proto__|prototype|\\u/.test(text) ? refusePrototypeKeys : undefined,
      )
    } catch (err) {
      return done(
        null,
        unparsable(
          isApiError(err) ? err.message : 'The request body is not valid JSON.',
          text,
          contentType,
        ),
      )
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return done(null, unparsable('The request body must be a JSON object.', text, contentType))
    }
    done(null, parsed)
  })
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined)
    done(
      null,
      unparsable('Send the body as application/json.', body as Buffer, req.headers['content-type']),
    )
  })
}

/** Refuses a body the parser could not read, after the Idempotency-Key hook has had the chance to hold its key. */
export function installUnparsableBodyRefusal(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    if (req.body instanceof UnparsableBody) throw req.body.error
  })
}
