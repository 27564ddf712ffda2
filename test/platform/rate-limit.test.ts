import assert from 'node:assert/strict'
import { createConnection } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { ApiError } from '../../src/http/errors.js'
import { RateLimits } from '../../src/http/rate-limit.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

const REDIS_URL = 'redis://127.0.0.1:6379'

let t: TestApp

async function freshToken(environment: 'sandbox' | 'production' = 'sandbox'): Promise<string> {
  return (await createTenant(t, { environment })).token()
}

/** Fires `n` requests at once and sorts the answers into passed and limited. */
async function burst(n: number, token: string, url = '/v1/programs', app: FastifyInstance = t.app) {
  const started = Date.now()
  const answers = await Promise.all(
    Array.from({ length: n }, () =>
      app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } }),
    ),
  )
  return {
    ok: answers.filter((r) => r.statusCode === 200),
    limited: answers.filter((r) => r.statusCode === 429),
    all: answers,
    ms: Date.now() - started,
  }
}

/**
 * Runs a timed scenario with a fresh client until it fits in one second: on a loaded machine a burst
 * can straddle two rate-limit windows, so it is tried up to three times before its result is taken as it is.
 */
async function withinASecond<R extends { ms: number }>(
  scenario: (token: string) => Promise<R>,
  environment: 'sandbox' | 'production' = 'sandbox',
): Promise<R & { token: string }> {
  let token = await freshToken(environment)
  let result = await scenario(token)
  for (let attempt = 1; attempt < 3 && result.ms >= 900; attempt++) {
    token = await freshToken(environment)
    result = await scenario(token)
  }
  return { ...result, token }
}

function assertRateLimited(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 429)
  const error = res.json().error
  assert.equal(error.code, 'rate_limited')
  assert.equal(error.type, 'rate_limit_error')
  assert.match(error.request_id, /^req_/)
  const retryAfter = Number(res.headers['retry-after'])
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 1,
    `Retry-After ${res.headers['retry-after']}`,
  )
}

function redisReachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: 6379 })
    socket.setTimeout(500)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}

describe('rate limits with the default budgets', () => {
  before(async () => {
    t = await startTestApp({
      env: { RATE_LIMIT_SANDBOX: '25', RATE_LIMIT_PRODUCTION: '100', RATE_LIMIT_POLLING: '10' },
      beforeReady(app) {
        app.get('/v1/test/rl/things/:thing_id', async (req) => ({
          object: 'thing',
          id: (req.params as { thing_id: string }).thing_id,
        }))
      },
    })
  })
  after(() => t.close())

  test('a sandbox client gets 25 requests a second; the 26th answers 429 rate_limited with Retry-After', async () => {
    const { ok, limited } = await withinASecond((token) => burst(26, token))
    assert.equal(ok.length, 25)
    assert.equal(limited.length, 1)
    assertRateLimited(limited[0])
  })

  test('a production client gets 100 requests a second', async () => {
    // Counted on the limiter itself: 101 authenticated HTTP requests may not fit in one second on a busy machine.
    const limits = await RateLimits.create(t.deps.config)
    let refused: unknown = null
    let passed = 0
    for (let i = 0; i < 101 && !refused; i++) {
      try {
        await limits.consume('oc_production_probe', 'production', null)
        passed++
      } catch (err) {
        refused = err
      }
    }
    assert.equal(passed, 100)
    assert.ok(refused instanceof ApiError)
    assert.equal(refused.code, 'rate_limited')
    assert.match(refused.headers?.['Retry-After'] ?? '', /^1$/)
    await limits.close()
    const { ok } = await burst(30, await freshToken('production'))
    assert.equal(ok.length, 30, 'over HTTP, a production client is not held to the sandbox budget')
  })

  test('with several HTTP processes and no Redis, each process holds an equal share of the budget', async () => {
    const limits = await RateLimits.create({ ...t.deps.config, httpProcesses: 4 })
    let passed = 0
    try {
      for (let i = 0; i < 30; i++) {
        await limits.consume('oc_share_probe', 'production', null)
        passed++
      }
    } catch (err) {
      assert.ok(err instanceof ApiError && err.code === 'rate_limited')
    }
    assert.equal(passed, 25, '100 a second over 4 processes')
    await limits.close()
  })

  test('polling one object by id is limited to 10 a second', async () => {
    const { ok, limited, token } = await withinASecond((token) =>
      burst(11, token, '/v1/test/rl/things/thg_1'),
    )
    assert.equal(ok.length, 10)
    assert.equal(limited.length, 1)
    assertRateLimited(limited[0])
    const list = await t.api(token, 'GET', '/v1/programs')
    assert.equal(
      list.statusCode,
      200,
      'lists are not polling: the client still has budget for them',
    )
    const other = await t.api(token, 'GET', '/v1/test/rl/things/thg_2')
    assert.notEqual(
      other.statusCode,
      429,
      'another object of the same kind has its own polling budget',
    )
  })

  test('clients are limited separately: one client at its limit does not slow another', async () => {
    const noisy = await freshToken()
    const quiet = await freshToken()
    const [loud, calm] = await Promise.all([burst(60, noisy), burst(20, quiet)])
    assert.ok(loud.limited.length >= 10, `${loud.limited.length} limited`)
    assert.equal(calm.ok.length, 20)
  })

  test('after Retry-After the client may call again', async () => {
    const { limited, token } = await withinASecond((token) => burst(26, token))
    assert.equal(limited.length, 1)
    await new Promise((r) => setTimeout(r, Number(limited[0].headers['retry-after']) * 1000 + 50))
    assert.equal((await t.api(token, 'GET', '/v1/programs')).statusCode, 200)
  })

  test('an unknown token answers 401 invalid_access_token, never 429', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.app.inject({
          method: 'GET',
          url: '/v1/programs',
          headers: { authorization: 'Bearer at_test_nope' },
        }),
      ),
    )
    assert.ok(answers.every((r) => r.statusCode === 401))
  })

  test('with REDIS_URL pointing at a Redis that is down, the API still answers and limits each node in-process', async () => {
    const node = await buildApp({
      ...t.deps,
      config: { ...t.deps.config, redisUrl: 'redis://127.0.0.1:1' },
    })
    try {
      await node.ready()
      const { ok, limited } = await withinASecond((token) => burst(26, token, '/v1/programs', node))
      assert.equal(ok.length, 25)
      assert.equal(limited.length, 1)
      assertRateLimited(limited[0])
    } finally {
      await node.close()
    }
  })

  test('with REDIS_URL the limit is shared by two nodes', async (ctx) => {
    if (!(await redisReachable())) return ctx.skip('Redis is not reachable on 127.0.0.1:6379')
    const config = { ...t.deps.config, redisUrl: REDIS_URL }
    const nodes = [await buildApp({ ...t.deps, config }), await buildApp({ ...t.deps, config })]
    try {
      await Promise.all(nodes.map((n) => n.ready()))
      const { a, b } = await withinASecond(async (token) => {
        const started = Date.now()
        const [a, b] = await Promise.all([
          burst(15, token, '/v1/programs', nodes[0]),
          burst(15, token, '/v1/programs', nodes[1]),
        ])
        return { a, b, ms: Date.now() - started }
      })
      assert.equal(a.ok.length + b.ok.length, 25)
      assert.equal(a.limited.length + b.limited.length, 5)
      for (const res of [...a.limited, ...b.limited]) assertRateLimited(res)
      assert.ok(a.ok.length > 0 && b.ok.length > 0, 'both nodes served some')
    } finally {
      await Promise.all(nodes.map((n) => n.close()))
    }
  })
})
