import { randomBytes } from 'node:crypto'
import { Svc, SvcError, type SvcEvent } from '../../sdk/src/index.js'
import type { CliClient } from './client.js'

export interface ListenOptions {
  forwardTo: string
  types?: string[]
  /** A local URL to register as the environment's authorization endpoint for the session. */
  authorizations?: string
  signal: AbortSignal
  out: (line: string) => void
  err: (line: string) => void
}

/** A signing secret for one `svc listen` session (the local receiver verifies with it, as with a webhook endpoint's). */
export function sessionSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`
}

/** POSTs one event to the local URL, signed like a webhook delivery; answers the status or the failure. */
export async function forward(url: string, event: SvcEvent, secret: string): Promise<string> {
  const body = JSON.stringify(event)
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', 'svc-signature': Svc.webhooks.generateTestHeader(body, secret),
        'svc-event-id': event.id, 'svc-event-type': event.type, 'svc-delivery-attempt': '1', 'user-agent': 'svc-cli-listen/1.0',
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
  const secret = sessionSecret()
  // One ordinary call first: a wrong address or refused credentials end the command at once, named.
  await svc.events.list({ limit: 1 }).firstPage()
  let registered = false
  if (options.authorizations) registered = await registerAuthorizations(svc, options.authorizations, options)
  options.out(`Forwarding ${options.types?.join(', ') ?? 'every'} event of ${client.file.organization_id ?? 'the organization'} (${client.file.environment ?? 'sandbox'}) from ${client.address.url} to ${options.forwardTo}`)
  options.out(`Your webhook signing secret for this session is ${secret} (verify Svc-Signature with it). Ctrl-C to stop.`)
  let last: string | undefined
  try {
    for await (const event of svc.events.stream({
      types: options.types,
      signal: options.signal,
      onConnect: ({ resumedFrom }) => options.out(resumedFrom ? `Reconnected, resuming after ${resumedFrom}` : 'Ready: listening for events'),
      onDisconnect: ({ error, retryInMs }) => options.err(`Stream closed${error ? ` (${(error as Error).message})` : ''}; reconnecting in ${Math.round(retryInMs / 100) / 10} s${last ? `, resuming after ${last}` : ''}`),
    })) {
      last = event.id
      const status = await forward(options.forwardTo, event, secret)
      options.out(`${event.created_at}  ${event.type.padEnd(24)} ${event.id}  → ${options.forwardTo} [${status}]`)
    }
  } finally {
    if (registered) {
      await svc.authorizationEndpoint.del().then(
        () => options.out('Removed the authorization endpoint registered for this session'),
        (err: Error) => options.err(`Could not remove the authorization endpoint: ${err.message}`),
      )
    }
  }
}

/**
 * `--authorizations URL`: registers the local URL as the environment's authorization endpoint for the session, so the
 * service asks it to approve each authorization (decisions: "Authorization decided by the integrator"), and prints the
 * endpoint's secret. A service without the authorization endpoint (404) is told, and listening goes on without it.
 */
async function registerAuthorizations(svc: Svc, url: string, options: ListenOptions): Promise<boolean> {
  try {
    const endpoint = await svc.authorizationEndpoint.update({ url, stand_in: 'decline' })
    options.out(`Authorization requests go to ${url}; verify them with ${endpoint.secret ?? '(the secret shown when it was created)'} and answer {"approved": true|false, "amount"?: n}`)
    return true
  } catch (err) {
    if (err instanceof SvcError && err.status === 404 && err.code === 'not_found') {
      options.err('This service has no authorization endpoint yet (PUT /v1/authorization_endpoint answered 404): --authorizations is ignored.')
      return false
    }
    throw err
  }
}
