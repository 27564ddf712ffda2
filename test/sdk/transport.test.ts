import assert from 'node:assert/strict'
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import {
  answerAuthorizationRequest,
  Svc,
  SvcAPIError,
  SvcAuthenticationError,
  SvcConnectionError,
  SvcSignatureVerificationError,
  type SvcEvent,
} from '../../sdk/src/index.js'
import type { TestApp } from '../helpers/app.js'
import { startReceiver } from '../webhooks/helpers.js'
import {
  ADDRESS,
  freePort,
  sdkTenant,
  startListeningApp,
  uniqueEmail,
  type SdkTenant,
} from './support.js'

let t: TestApp
let baseUrl: string
let tenant: SdkTenant

before(async () => {
  ;({ t, baseUrl } = await startListeningApp())
  tenant = await sdkTenant(t, baseUrl)
})
after(() => t.close())

/** A fetch that records each request (method, path, headers) before passing it on. */
function recordingFetch(): {
  fetch: typeof fetch
  calls: { method: string; path: string; headers: Record<string, string> }[]
} {
  const calls: { method: string; path: string; headers: Record<string, string> }[] = []
  return {
    calls,
    fetch: (input, init) => {
      const url = new URL(String(input))
      calls.push({
        method: init?.method ?? 'GET',
        path: url.pathname + url.search,
        headers: { ...(init?.headers as Record<string, string>) },
      })
      return fetch(input, init)
    },
  }
}

type Fault = (req: {
  method: string
  url: string
  headers: IncomingHttpHeaders
  index: number
}) =>
  | 'forward'
  | 'drop_after_effect'
  | { status: number; headers?: Record<string, string>; body: unknown }

/**
 * A proxy in front of the service that injects faults: `drop_after_effect` forwards the request, lets the service
 * apply it and answer, then destroys the caller's connection without a byte of the answer.
 */
async function faultProxy(
  target: string,
  fault: Fault,
): Promise<{
  url: string
  seen: { method: string; url: string; key?: string; outcome: string }[]
  close(): Promise<void>
}> {
  const seen: { method: string; url: string; key?: string; outcome: string }[] = []
  const upstream = new URL(target)
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const index = seen.filter((x) => x.method === req.method && x.url === req.url).length
      const decision = req.url!.startsWith('/oauth/')
        ? 'forward'
        : fault({ method: req.method!, url: req.url!, headers: req.headers, index })
      seen.push({
        method: req.method!,
        url: req.url!,
        key: req.headers['idempotency-key'] as string | undefined,
        outcome: typeof decision === 'string' ? decision : String(decision.status),
      })
      if (typeof decision === 'object') {
        res
          .writeHead(decision.status, { 'content-type': 'application/json', ...decision.headers })
          .end(JSON.stringify(decision.body))
        return
      }
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          const body: Buffer[] = []
          answer.on('data', (c: Buffer) => body.push(c))
          answer.on('end', () => {
            if (decision === 'drop_after_effect') {
              req.socket.destroy()
              return
            }
            res.writeHead(answer.statusCode!, answer.headers).end(Buffer.concat(body))
          })
        },
      )
      out.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function fundedAccount(svc: Svc): Promise<string> {
  const cardholder = await svc.cardholders.create({
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: uniqueEmail('retry'),
    address: ADDRESS,
  })
  await svc.kyc.create(cardholder.id, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
  })
  return (
    await svc.accounts.create({
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
  ).id
}

describe('retries', () => {
  test('a credit whose answer is lost after the service applied it is retried with the same key: one effect, the stored answer replayed', async () => {
    const direct = tenant.svc()
    const accountId = await fundedAccount(direct)
    const proxy = await faultProxy(baseUrl, ({ method, url }) =>
      method === 'POST' &&
      url.endsWith('/credit') &&
      !proxy.seen.some((s) => s.url.endsWith('/credit'))
        ? 'drop_after_effect'
        : 'forward',
    )
    try {
      const delays: number[] = []
      // Every call goes through the proxy; assertions still name the service's own token URL (the audience it checks).
      const svc = tenant.svc({
        baseUrl,
        sleep: async (ms) => {
          delays.push(ms)
        },
      })
      Object.assign(svc.core, { baseUrl: proxy.url })
      const answer = await svc.accounts.credit(accountId, { amount: 1_000 })
      const credits = proxy.seen.filter((s) => s.url.endsWith('/credit'))
      assert.deepEqual(
        credits.map((s) => s.outcome),
        ['drop_after_effect', 'forward'],
      )
      assert.ok(
        credits[0].key && credits[0].key === credits[1].key,
        'the retry carries the same Idempotency-Key',
      )
      assert.equal(answer.lastResponse!.attempts, 2)
      assert.equal(answer.lastResponse!.idempotentReplay, true)
      assert.equal(answer.available_balance, 1_000)
      assert.equal(delays.length, 1)
      assert.ok(
        delays[0] >= 250 && delays[0] <= 500,
        `first backoff ${delays[0]} ms is 0.5–1 × 500 ms`,
      )
      const account = await direct.accounts.retrieve(accountId)
      assert.equal(account.available_balance, 1_000, 'credited once')
      assert.equal((await direct.accounts.listEntries(accountId).toArray()).length, 1)
    } finally {
      await proxy.close()
    }
  })

  test('429 waits Retry-After, 409 idempotency_request_in_progress and 5xx back off, then the call succeeds with one key', async () => {
    const answers = [
      {
        status: 429,
        headers: { 'retry-after': '2' },
        body: {
          error: {
            type: 'rate_limit_error',
            code: 'rate_limited',
            message: 'slow down',
            request_id: 'req_x',
          },
        },
      },
      {
        status: 409,
        body: {
          error: {
            type: 'invalid_request_error',
            code: 'idempotency_request_in_progress',
            message: 'busy',
            request_id: 'req_y',
          },
        },
      },
      {
        status: 503,
        body: {
          error: {
            type: 'api_error',
            code: 'internal_error',
            message: 'down',
            request_id: 'req_z',
          },
        },
      },
    ]
    const proxy = await faultProxy(baseUrl, ({ method, url, index }) =>
      method === 'POST' && url === '/v1/cardholders' && index < answers.length
        ? answers[index]
        : 'forward',
    )
    try {
      const delays: number[] = []
      const svc = tenant.svc({
        maxRetries: 3,
        sleep: async (ms) => {
          delays.push(ms)
        },
      })
      Object.assign(svc.core, { baseUrl: proxy.url })
      const cardholder = await svc.cardholders.create({
        type: 'individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: uniqueEmail('retry'),
      })
      assert.match(cardholder.id, /^chd_/)
      assert.equal(cardholder.lastResponse!.attempts, 4)
      assert.equal(delays[0], 2_000, 'Retry-After honoured')
      assert.ok(delays[1] >= 500 && delays[1] <= 1_000, `second backoff ${delays[1]}`)
      assert.ok(delays[2] >= 1_000 && delays[2] <= 2_000, `third backoff ${delays[2]}`)
      assert.equal(
        new Set(proxy.seen.filter((s) => s.url === '/v1/cardholders').map((s) => s.key)).size,
        1,
      )
    } finally {
      await proxy.close()
    }
  })

  test('retries stop at maxRetries: the last refusal is thrown typed; a refused connection is SvcConnectionError naming the address', async () => {
    const proxy = await faultProxy(baseUrl, ({ url }) =>
      url.startsWith('/v1/')
        ? {
            status: 500,
            body: {
              error: {
                type: 'api_error',
                code: 'internal_error',
                message: 'boom',
                request_id: 'req_1',
              },
            },
          }
        : 'forward',
    )
    try {
      const svc = tenant.svc({ maxRetries: 1, sleep: async () => {} })
      Object.assign(svc.core, { baseUrl: proxy.url })
      await assert.rejects(
        svc.cardholders.list().firstPage(),
        (err: unknown) =>
          err instanceof SvcAPIError && err.status === 500 && err.code === 'internal_error',
      )
      assert.equal(proxy.seen.filter((s) => s.url.startsWith('/v1/')).length, 2)
    } finally {
      await proxy.close()
    }
    const nowhere = `http://127.0.0.1:${await freePort()}`
    const lost = tenant.svc({ baseUrl: nowhere, maxRetries: 2, sleep: async () => {} })
    await assert.rejects(
      lost.cardholders.list().firstPage(),
      (err: unknown) =>
        err instanceof SvcConnectionError &&
        err.message.includes(nowhere) &&
        /ECONNREFUSED/.test(err.message),
    )
  })
})

describe('pagination', () => {
  test('list() walks 60 objects 25 at a time with for await; awaiting it is the first page', async () => {
    const org = await sdkTenant(t, baseUrl)
    const recorder = recordingFetch()
    const svc = org.svc({ fetch: recorder.fetch })
    const created: string[] = []
    for (let i = 0; i < 60; i++)
      created.push(
        (
          await svc.cardholders.create({
            type: 'individual',
            first_name: 'P',
            last_name: `N${i}`,
            email: uniqueEmail('page'),
          })
        ).id,
      )
    recorder.calls.length = 0
    const seen: string[] = []
    for await (const cardholder of svc.cardholders.list({ limit: 25 })) seen.push(cardholder.id)
    assert.deepEqual(seen, [...created].reverse(), 'every cardholder once, newest first')
    const pages = recorder.calls.filter((c) => c.path.startsWith('/v1/cardholders'))
    assert.equal(pages.length, 3)
    assert.ok(
      pages.slice(1).every((c) => /starting_after=/.test(c.path) && /limit=25/.test(c.path)),
    )
    const first = await svc.cardholders.list({ limit: 25 })
    assert.equal(first.data.length, 25)
    assert.equal(first.has_more, true)
    assert.equal((await svc.cardholders.list({ limit: 25 }).toArray({ limit: 30 })).length, 30)
  })
})

describe('the access token', () => {
  test('is cached, shared by concurrent calls, and refreshed once it is within 60 s of expiry on the SDK clock', async () => {
    const recorder = recordingFetch()
    const svc = tenant.svc({ fetch: recorder.fetch, clock: () => t.clock.now().getTime() })
    const tokenCalls = () => recorder.calls.filter((c) => c.path === '/oauth/token').length
    try {
      await Promise.all([
        svc.programs.list().firstPage(),
        svc.programs.list().firstPage(),
        svc.cardholders.list().firstPage(),
      ])
      assert.equal(tokenCalls(), 1, 'concurrent calls share one token request')
      t.clock.advance(830_000)
      await svc.programs.list().firstPage()
      assert.equal(tokenCalls(), 1, '70 s before expiry the token is still used')
      t.clock.advance(20_000)
      await svc.programs.list().firstPage()
      assert.equal(tokenCalls(), 2, '50 s before expiry a new token is fetched first')
    } finally {
      t.clock.reset()
    }
  })

  test('a 401 invalid_access_token refreshes the token once and repeats the call; a second 401 is thrown', async () => {
    // The service refuses the token the SDK holds (as after its token store was reset): here the first call's token is replaced.
    let spoil = 1
    const calls: string[] = []
    const svc = tenant.svc({
      fetch: (input, init) => {
        const url = new URL(String(input))
        calls.push(url.pathname)
        const headers = { ...(init?.headers as Record<string, string>) }
        if (url.pathname.startsWith('/v1/') && spoil > 0) {
          spoil--
          headers.authorization = 'Bearer at_test_00000000000000000000000000000000000000000000'
        }
        return fetch(input, { ...init, headers })
      },
    })
    const page = await svc.programs.list().firstPage()
    assert.equal(page.data.length, 2)
    assert.deepEqual(calls, ['/oauth/token', '/v1/programs', '/oauth/token', '/v1/programs'])
    spoil = 2
    calls.length = 0
    await assert.rejects(
      svc.programs.list().firstPage(),
      (err: unknown) =>
        err instanceof SvcAuthenticationError &&
        err.code === 'invalid_access_token' &&
        err.status === 401,
    )
    assert.deepEqual(calls, ['/v1/programs', '/oauth/token', '/v1/programs'])
  })
})

describe('webhooks', () => {
  test('Svc.webhooks.constructEvent verifies real deliveries, refuses a changed body, and takes both secrets during a rotation', async () => {
    const svc = tenant.svc()
    const receiver = await startReceiver()
    try {
      const endpoint = await svc.webhookEndpoints.create({
        url: receiver.url,
        enabled_events: ['cardholder.created'],
      })
      const secret = endpoint.secret!
      await svc.cardholders.create({
        type: 'individual',
        first_name: 'Hook',
        last_name: 'Ed',
        email: uniqueEmail('hook'),
      })
      await new JobRunner(t.deps, t.jobs, { listen: false }).drain()
      const [delivery] = await receiver.waitFor(1)
      const header = delivery.headers['svc-signature'] as string
      const event = Svc.webhooks.constructEvent<SvcEvent>(delivery.raw, header, secret)
      assert.equal(event.type, 'cardholder.created')
      assert.equal(event.id, delivery.headers['svc-event-id'])
      assert.deepEqual(await svc.events.retrieve(event.id), event)
      assert.throws(
        () => Svc.webhooks.constructEvent(delivery.raw.replace('Hook', 'Hack'), header, secret),
        SvcSignatureVerificationError,
      )
      assert.throws(
        () => Svc.webhooks.constructEvent(delivery.raw, header, 'whsec_wrong'),
        SvcSignatureVerificationError,
      )
      assert.throws(
        () => Svc.webhooks.constructEvent(delivery.raw, undefined, secret),
        SvcSignatureVerificationError,
      )
      const signedAt = Number(/t=(\d+)/.exec(header)![1])
      assert.equal(
        svc.webhooks.verifySignature(delivery.raw, header, secret, { nowSeconds: signedAt + 299 }),
        true,
      )
      assert.equal(
        svc.webhooks.verifySignature(delivery.raw, header, secret, { nowSeconds: signedAt + 301 }),
        false,
        'outside the 300 s tolerance',
      )

      const rotated = await svc.webhookEndpoints.rotateSecret(endpoint.id)
      await svc.cardholders.create({
        type: 'individual',
        first_name: 'Hook',
        last_name: 'Two',
        email: uniqueEmail('hook'),
      })
      await new JobRunner(t.deps, t.jobs, { listen: false }).drain()
      const second = (await receiver.waitFor(2))[1]
      const both = second.headers['svc-signature'] as string
      assert.equal(both.split(',').filter((p) => p.startsWith('v1=')).length, 2)
      assert.equal(
        Svc.webhooks.constructEvent<SvcEvent>(second.raw, both, secret).type,
        'cardholder.created',
      )
      assert.equal(
        Svc.webhooks.constructEvent<SvcEvent>(second.raw, both, rotated.secret!).type,
        'cardholder.created',
      )
    } finally {
      await receiver.close()
    }
  })

  test('answerAuthorizationRequest verifies the request and answers {approved} or a partial {approved, amount}', async () => {
    const secret = 'whsec_test_authorizations'
    const body = JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'authorization.request',
      data: { object: { id: 'auth_1', object: 'authorization', amount: 5_000, currency: 'USD' } },
    })
    const header = Svc.webhooks.generateTestHeader(body, secret)
    const partial = await answerAuthorizationRequest(body, header, secret, (a) => ({
      approved: true,
      amount: a.amount - 1_000,
    }))
    assert.deepEqual(JSON.parse(partial.body), { approved: true, amount: 4_000 })
    const declined = await answerAuthorizationRequest(body, header, secret, () => false)
    assert.deepEqual(JSON.parse(declined.body), { approved: false })
    await assert.rejects(
      answerAuthorizationRequest(body, header, secret, () => ({ approved: true, amount: 9_000 })),
      RangeError,
    )
    await assert.rejects(
      answerAuthorizationRequest(body, header, 'whsec_other', () => true),
      SvcSignatureVerificationError,
    )
  })
})
