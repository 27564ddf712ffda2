import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Svc, SvcError, type SvcEvent } from '@svc/sdk'
import { decimalAmount } from '../lib/money-format.js'
import type { CliClient } from './client.js'

export interface ListenOptions {
  forwardTo: string
  types?: string[]
  /** A local URL to register as the environment's authorization endpoint for the session. */
  authorizations?: string
  /** The port the authorization relay listens on (127.0.0.1); any free one when not given. */
  authorizationsPort?: number
  /** The file that keeps the signing secret between sessions (`listenSecretFile`). */
  secretFile: string
  signal: AbortSignal
  out: (line: string) => void
  err: (line: string) => void
}

/** A new signing secret for `svc listen` (the local receiver verifies with it, as with a webhook endpoint's). */
export function sessionSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`
}

/** Where `svc listen` keeps its signing secret for an organization's environment: in the data folder. */
export function listenSecretFile(
  dataDir: string,
  organizationId: string,
  environment: string,
): string {
  return join(dataDir, `listen-secret-${organizationId}-${environment}`)
}

/**
 * The signing secret of every `svc listen` session of that organization and environment: read from `file`, made
 * there (readable by its owner only) the first time. A receiver started with it keeps verifying across sessions.
 */
export function listenSecret(file: string): string {
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim()
    if (/^whsec_[A-Za-z0-9_-]{20,}$/.test(kept)) return kept
  }
  const secret = sessionSecret()
  mkdirSync(join(file, '..'), { recursive: true })
  writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  return secret
}

/** POSTs one event to the local URL, signed like a webhook delivery; answers the status or the failure. */
export async function forward(url: string, event: SvcEvent, secret: string): Promise<string> {
  const body = JSON.stringify(event)
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'svc-signature': Svc.webhooks.generateTestHeader(body, secret),
        'svc-event-id': event.id,
        'svc-event-type': event.type,
        'svc-delivery-attempt': '1',
        'user-agent': 'svc-cli-listen/1.0',
      },
      body,
      signal: AbortSignal.timeout(10_000),
    })
    await res.arrayBuffer().catch(() => undefined)
    return String(res.status)
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause
    return `failed (${cause?.code ?? (err as Error).name})`
  }
}

/**
 * `svc listen`: streams the organization's events of the client's environment (`GET /v1/events/stream`) and forwards
 * each to a local URL, one line per event with the local answer's status; a dropped stream resumes after the last event.
 */
export async function listen(client: CliClient, options: ListenOptions): Promise<void> {
  const { svc } = client
  const secret = listenSecret(options.secretFile)
  // One ordinary call first: a wrong address or refused credentials end the command at once, named.
  await svc.events.list({ limit: 1 }).firstPage()
  const relay = options.authorizations
    ? await relayAuthorizations(svc, options.authorizations, options)
    : undefined
  options.out(
    `Forwarding ${options.types?.join(', ') ?? 'every'} event of ${client.file.organization_id ?? 'the organization'} (${client.file.environment ?? 'sandbox'}) from ${client.address.url} to ${options.forwardTo}`,
  )
  options.out(
    `Your webhook signing secret is ${secret} (verify Svc-Signature with it; kept in ${options.secretFile}, the same every session). Ctrl-C to stop.`,
  )
  let last: string | undefined
  try {
    for await (const event of svc.events.stream({
      types: options.types,
      signal: options.signal,
      onConnect: ({ resumedFrom }) =>
        options.out(
          resumedFrom
            ? `Reconnected, resuming after ${resumedFrom}`
            : 'Ready: listening for events',
        ),
      onDisconnect: ({ error, retryInMs }) =>
        options.err(
          `Stream closed${error ? ` (${(error as Error).message})` : ''}; reconnecting in ${Math.round(retryInMs / 100) / 10} s${last ? `, resuming after ${last}` : ''}`,
        ),
    })) {
      last = event.id
      const status = await forward(options.forwardTo, event, secret)
      options.out(
        `${event.created_at}  ${event.type.padEnd(24)} ${event.id}  → ${options.forwardTo} [${status}]`,
      )
    }
  } finally {
    await relay?.close()
  }
}

/** The path of the relay's URL: an endpoint left by a `svc listen` that did not stop cleanly is recognised by it. */
const RELAY_PATH = '/svc-listen/authorizations'

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/** What the local process answered, for the session's line: `approved`, `approved 18.00 of 25.00`, `declined`, or why it is the stand-in. */
function describeAnswer(status: number, text: string, requested: number, currency: string): string {
  if (status < 200 || status > 299) return `${status}, the stand-in decides`
  try {
    const answer = JSON.parse(text) as { approved?: unknown; amount?: unknown }
    if (answer.approved === false) return `${status} declined`
    if (answer.approved === true)
      return typeof answer.amount === 'number' && answer.amount !== requested
        ? `${status} approved ${decimalAmount(answer.amount, currency)} of ${decimalAmount(requested, currency)}`
        : `${status} approved`
  } catch {
    /* told below */
  }
  return `${status} not {"approved": …}, the stand-in decides`
}

/**
 * `--authorizations URL` (decisions: "Authorization decided by the integrator"): the CLI listens on 127.0.0.1 and
 * registers that address as the environment's authorization endpoint for the session (stand-in `decline`). Each
 * `authorization.request` the service sends is verified with the endpoint's secret (printed: the local process
 * verifies with it too), relayed unchanged (same body, same `Svc-Signature`, `Svc-Event-Id`, `Svc-Event-Type`) to
 * URL, and the local answer goes back to the service as it came; one line per request. On exit the endpoint is
 * removed (`DELETE`). The service calls the relay, so it must run on this machine (the `npm start` sandbox).
 * An endpoint registered otherwise is never replaced: the command stops and says so.
 */
async function relayAuthorizations(
  svc: Svc,
  localUrl: string,
  options: ListenOptions,
): Promise<{ close(): Promise<void> }> {
  const existing = await svc.authorizationEndpoint.retrieve().catch((err: unknown) => {
    if (err instanceof SvcError && err.status === 404) return undefined
    throw err
  })
  if (existing && !existing.url.endsWith(RELAY_PATH)) {
    throw new Error(
      `this environment already has an authorization endpoint (${existing.url}); --authorizations would replace it. Remove it first (DELETE /v1/authorization_endpoint) or listen without --authorizations.`,
    )
  }
  if (existing) await svc.authorizationEndpoint.del() // left by a session that did not stop cleanly

  let secret = ''
  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req)
      if (req.method !== 'POST' || req.url !== RELAY_PATH) return void res.writeHead(404).end()
      if (!secret || !Svc.webhooks.verifySignature(raw, req.headers['svc-signature'], secret)) {
        options.err(
          `Refused an authorization request whose Svc-Signature does not match the session's endpoint secret (answered 400)`,
        )
        return void res.writeHead(400).end()
      }
      const event = JSON.parse(raw.toString('utf8')) as SvcEvent & {
        data: {
          object: { id: string; currency: string }
          request: { type: string; amount: number }
        }
      }
      const label = `${event.created_at}  ${event.type.padEnd(24)} ${event.data.object.id}  ${event.data.request.type} ${decimalAmount(event.data.request.amount, event.data.object.currency)} ${event.data.object.currency}  → ${localUrl}`
      try {
        const answer = await fetch(localUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'svc-signature': String(req.headers['svc-signature']),
            'svc-event-id': event.id,
            'svc-event-type': event.type,
            'user-agent': 'svc-cli-listen/1.0',
          },
          body: new Uint8Array(raw),
          signal: AbortSignal.timeout(2_000), // the endpoint's timeout_ms is at most 2000: the service has given up by then
        })
        const text = await answer.text()
        options.out(
          `${label} [${describeAnswer(answer.status, text, event.data.request.amount, event.data.object.currency)}]`,
        )
        res
          .writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
          })
          .end(text)
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause
        options.out(
          `${label} [failed (${cause?.code ?? (err as Error).name}), the stand-in decides]`,
        )
        res.writeHead(502).end()
      }
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(options.authorizationsPort ?? 0, '127.0.0.1', resolve),
  )
  const relayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${RELAY_PATH}`
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()))
  try {
    const endpoint = await svc.authorizationEndpoint.update({ url: relayUrl, stand_in: 'decline' })
    secret = endpoint.secret ?? ''
  } catch (err) {
    await closeServer()
    throw err
  }
  options.out(
    `Authorization requests are relayed to ${localUrl} (endpoint ${relayUrl}); verify Svc-Signature with ${secret} and answer {"approved": true|false, "amount"?: n}`,
  )
  return {
    async close() {
      await svc.authorizationEndpoint.del().then(
        () => options.out('Removed the authorization endpoint registered for this session'),
        (err: Error) => options.err(`Could not remove the authorization endpoint: ${err.message}`),
      )
      await closeServer()
    },
  }
}
