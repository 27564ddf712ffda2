import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { performance } from 'node:perf_hooks'
import {
  assertPublicHost,
  urlHost,
  WebhookUrlRefused,
  type WebhookUrlPolicy,
} from './url-policy.js'

/** The interface's limit: the endpoint must answer within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000
/** How much of a response body is kept with the attempt (the body is otherwise ignored). */
export const RESPONSE_BODY_LIMIT = 4096
/** How much of a response body is read at most: a longer body is cut off there (`bodyComplete` false). */
export const RESPONSE_READ_LIMIT = 64 * 1024

// Keep-alive pools: repeated deliveries to one receiver reuse connections.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
}

export interface SendResult {
  statusCode: number | null
  durationMs: number
  error: string | null
  /** The first `keepBytes` bytes of the answer's body (as UTF-8), null when empty or unanswered. */
  responseBody: string | null
  /** Why the answer's body is not whole (over RESPONSE_READ_LIMIT, cut off, timed out); null when it arrived whole. */
  bodyIncomplete: string | null
}

/**
 * A `lookup` for the connection itself: resolves, refuses unless every address is public, and connects
 * to an address it checked, so a DNS answer that changes between check and connect (rebinding) cannot
 * reach a private network.
 */
function publicOnlyLookup(): LookupFunction {
  return ((
    hostname: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    assertPublicHost(hostname).then(
      (addresses) => {
        if (options?.all) callback(null, addresses)
        else callback(null, addresses[0].address, addresses[0].family)
      },
      (err: Error) => callback(Object.assign(err, { code: 'EWEBHOOKURL' })),
    )
  }) as unknown as LookupFunction
}

function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  if (err instanceof WebhookUrlRefused) return `url refused: ${e.message}`
  if (e?.code === 'EWEBHOOKURL') return `url refused: ${e.message}`
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err)
}

type Outcome = Omit<SendResult, 'durationMs'>
const unanswered = (error: string): Outcome => ({
  statusCode: null,
  error,
  responseBody: null,
  bodyIncomplete: 'no answer',
})

/**
 * POSTs one delivery; never throws: every outcome (status, timeout, refusal, TLS failure) is a result. The answer's
 * body is read up to RESPONSE_READ_LIMIT and its first `keepBytes` bytes are answered.
 */
export async function sendWebhook(
  target: URL,
  body: string,
  headers: Record<string, string>,
  policy: WebhookUrlPolicy,
  timeoutMs = DELIVERY_TIMEOUT_MS,
  keepBytes = RESPONSE_BODY_LIMIT,
): Promise<SendResult> {
  const started = performance.now()
  const done = (partial: Outcome): SendResult => ({
    ...partial,
    durationMs: Math.round(performance.now() - started),
  })
  // Under allow_local_http only plain http skips the public-address rule (it was accepted for a local receiver).
  const isPublic =
    policy === 'public' || (policy === 'allow_local_http' && target.protocol === 'https:')
  if (isPublic) {
    if (target.protocol !== 'https:') return done(unanswered('url refused: not https'))
    const host = urlHost(target)
    if (isIP(host)) {
      try {
        await assertPublicHost(host)
      } catch (err) {
        return done(unanswered(describeError(err)))
      }
    }
  }
  const agent = agents[target.protocol as 'http:' | 'https:']
  if (!agent) return done(unanswered(`unsupported protocol ${target.protocol}`))
  const payload = Buffer.from(body, 'utf8')

  const deadline = started + timeoutMs
  const first = await post(target, agent, payload, headers, isPublic, timeoutMs, keepBytes)
  // A kept-alive connection the receiver closed meanwhile fails before any byte is answered: the request
  // never reached the receiver, so it is sent once more on a fresh connection (Node's documented pattern).
  if (first.staleSocket && performance.now() < deadline) {
    return done(
      (
        await post(
          target,
          agent,
          payload,
          headers,
          isPublic,
          deadline - performance.now(),
          keepBytes,
        )
      ).result,
    )
  }
  return done(first.result)
}

function post(
  target: URL,
  agent: http.Agent,
  payload: Buffer,
  headers: Record<string, string>,
  isPublic: boolean,
  timeoutMs: number,
  keepBytes: number,
): Promise<{ result: Outcome; staleSocket: boolean }> {
  return new Promise((resolve) => {
    let settled = false
    const finish = (result: Outcome, staleSocket = false) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ result, staleSocket })
    }
    const req = (target.protocol === 'https:' ? https : http).request(
      target,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(payload.length) },
        ...(isPublic ? { lookup: publicOnlyLookup() } : {}),
      },
      (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          if (size <= RESPONSE_READ_LIMIT) chunks.push(chunk)
          size += chunk.length
          if (size > RESPONSE_READ_LIMIT) res.destroy()
        })
        const settle = () => {
          const text = Buffer.concat(chunks)
            .subarray(0, Math.min(keepBytes, RESPONSE_READ_LIMIT))
            .toString('utf8')
          const bodyIncomplete =
            size > RESPONSE_READ_LIMIT
              ? `the answer's body is over ${RESPONSE_READ_LIMIT / 1024} KiB`
              : res.complete
                ? null
                : "the answer's body was cut off"
          finish({
            statusCode: res.statusCode ?? null,
            error: null,
            responseBody: text.length ? text : null,
            bodyIncomplete,
          })
        }
        res.on('end', settle)
        res.on('close', settle)
        res.on('error', settle)
      },
    )
    // The answer is due whole within the time: a status whose body is still arriving is no answer yet.
    const timer = setTimeout(() => {
      const err = Object.assign(new Error(`no response within ${Math.round(timeoutMs) / 1000} s`), {
        code: 'ETIMEDOUT',
      })
      finish(unanswered(describeError(err)))
      req.destroy(err)
    }, timeoutMs)
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')
      finish(unanswered(describeError(err)), stale)
    })
    req.end(payload)
  })
}
