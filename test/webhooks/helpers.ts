import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { withTx } from '../../src/db/tx.js'
import { emit } from '../../src/modules/events/emit.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import type { EventType } from '../../src/modules/events/catalog.js'

export interface Received {
  headers: IncomingHttpHeaders
  raw: string
  body: any
  at: number
}

export interface Receiver {
  url: string
  received: Received[]
  /** Decides each answer's status (default 200); may be async to hold the response. */
  respond: (
    req: Received,
    index: number,
  ) =>
    | number
    | { status: number; body: string }
    | Promise<number | { status: number; body: string }>
  /** Resolves once `n` requests have arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/** A real HTTP receiver on 127.0.0.1 that records every delivery. */
export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const waiters: { n: number; resolve: () => void }[] = []
  const receiver: Receiver = {
    url: '',
    received: [],
    respond: () => 200,
    async waitFor(n, timeoutMs = 5000) {
      if (receiver.received.length >= n) return receiver.received
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receiver.received.length} of ${n} requests`)),
          timeoutMs,
        )
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer)
            resolve()
          },
        })
      })
      return receiver.received
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: unknown = null
      try {
        body = JSON.parse(raw)
      } catch {
        /* recorded raw */
      }
      const entry: Received = { headers: req.headers, raw, body, at: Date.now() }
      const index = receiver.received.push(entry) - 1
      const answer = await receiver.respond(entry, index)
      const status = typeof answer === 'number' ? answer : answer.status
      const text =
        typeof answer === 'number' ? (status >= 300 ? `failure ${status}` : 'ok') : answer.body
      res.writeHead(status, { 'content-type': 'text/plain' }).end(text)
      for (const w of waiters.splice(0)) {
        if (receiver.received.length >= w.n) w.resolve()
        else waiters.push(w)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return receiver
}

/** Emits an event the way every module does: inside a committed transaction. */
export function emitEvent(
  t: TestApp,
  tenant: TestClient,
  type: EventType,
  object: Record<string, unknown> = { id: 'obj_1', object: 'thing' },
): Promise<string> {
  return withTx(t.deps.db, (trx) =>
    emit(
      trx,
      { organizationId: tenant.organizationId, environment: tenant.environment },
      type,
      object,
      t.clock.now(),
    ),
  )
}

/** Creates an endpoint through the API and answers its JSON (with the secret). */
export async function createEndpoint(
  t: TestApp,
  token: string,
  url: string,
  enabledEvents: string[] = ['*'],
): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/webhook_endpoints', {
    url,
    enabled_events: enabledEvents,
  })
  if (res.statusCode !== 201) throw new Error(`create endpoint: ${res.statusCode} ${res.body}`)
  return res.json()
}
