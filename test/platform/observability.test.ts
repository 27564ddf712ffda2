import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { createTenant, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'

const PAN = '4242424242424242'
const CVC = '987'
const SECRET = 'whsec_s3cr3tValueThatMustNotLeak'
const PIN = '8531'

/** Every log line the service writes, parsed. */
const lines: string[] = []
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean))
    done()
  },
})

let t: TestApp
let token: string

function logText(): string {
  return lines.join('\n')
}

describe('request ids, logs and metrics', () => {
  before(async () => {
    t = await startTestApp({
      env: { LOG_LEVEL: 'debug' },
      logDestination: sink,
      beforeReady(app) {
        app.post('/v1/test/obs/cards', async (req) => {
          // A careless handler: logs the body, the headers and a nested copy of the card.
          req.log.info({ body: req.body }, 'body received')
          req.log.info({ headers: req.headers }, 'headers received')
          req.log.info({ card: req.body, wrapper: { inner: { card: req.body } } }, 'card received')
          req.log.info(`raw text with ${PAN} and Bearer ${token}`)
          return { object: 'card', last4: PAN.slice(-4) }
        })
        app.post('/v1/test/obs/failures', async (req) => {
          throw Object.assign(new Error('downstream failed'), {
            request: req.body,
            headers: req.headers,
          })
        })
        app.post('/v1/test/obs/statement', async () => {
          // What a failed statement of the embedded database throws: the SQL and every bound value.
          throw Object.assign(new Error('date/time field value out of range'), {
            query: 'INSERT INTO kyc_attestations VALUES ($1, $2)',
            params: ['approved', 'PROVIDER-REF-7731'],
          })
        })
      },
    })
    token = await (await createTenant(t)).token()
  })
  after(() => t.close())

  test('GET /metrics exposes svc_http_requests_total by method, route template and status', async () => {
    await t.api(token, 'GET', '/v1/programs')
    await t.api(token, 'GET', '/v1/no-such-thing')
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/plain/)
    assert.match(res.body, /# TYPE svc_http_requests_total counter/)
    assert.match(
      res.body,
      /svc_http_requests_total\{method="GET",route="\/v1\/programs",status="200"\} [1-9]/,
    )
    assert.match(
      res.body,
      /svc_http_requests_total\{method="GET",route="not_found",status="404"\} [1-9]/,
    )
    assert.match(res.body, /svc_http_request_duration_seconds_bucket/)
    assert.doesNotMatch(res.body, /no-such-thing/, 'raw paths never become labels')
  })

  test('each request is logged once with its request id, route and status', async () => {
    const res = await t.api(token, 'GET', '/v1/programs')
    const id = String(res.headers['svc-request-id'])
    const entries = lines
      .map((l) => JSON.parse(l))
      .filter((e) => e.req_id === id && e.msg === 'request')
    assert.equal(entries.length, 1)
    assert.equal(entries[0].route, '/v1/programs')
    assert.equal(entries[0].status, 200)
    assert.equal(typeof entries[0].ms, 'number')
  })

  test('a bearer token and card data in headers and body never reach the log', async () => {
    lines.length = 0
    const res = await t.api(token, 'POST', '/v1/test/obs/cards', {
      pan: PAN,
      cvc: CVC,
      secret: SECRET,
      pin: PIN,
      nested: { deeper: { pan: PAN, cvc: CVC, secret: SECRET } },
    })
    assert.equal(res.statusCode, 200)
    const text = logText()
    assert.ok(
      text.includes('body received') &&
        text.includes('card received') &&
        text.includes('raw text with'),
      'the handler logged',
    )
    for (const value of [token, PAN, SECRET, `"${CVC}"`, `"${PIN}"`])
      assert.ok(!text.includes(value), `${value} leaked`)
    assert.ok(!text.includes(token.slice(8)), 'no part of the token after its prefix')
  })

  test('an unexpected error carrying the request is logged with its stack but without secrets', async () => {
    lines.length = 0
    const res = await t.api(token, 'POST', '/v1/test/obs/failures', {
      pan: PAN,
      cvc: CVC,
      secret: SECRET,
    })
    assert.equal(res.statusCode, 500)
    const text = logText()
    const entry = lines
      .map((l) => JSON.parse(l))
      .find((e) => e.err?.message === 'downstream failed')
    assert.ok(entry, 'the failure was logged')
    assert.match(entry.err.stack, /downstream failed/)
    assert.equal(entry.req_id ?? entry.reqId, res.json().error.request_id)
    for (const value of [token, PAN, SECRET, `"${CVC}"`])
      assert.ok(!text.includes(value), `${value} leaked`)
  })

  test("a failed statement's bound values are not logged", async () => {
    lines.length = 0
    const res = await t.api(token, 'POST', '/v1/test/obs/statement', {})
    assert.equal(res.statusCode, 500)
    assert.match(logText(), /date\/time field value out of range/)
    assert.ok(!logText().includes('PROVIDER-REF-7731'), 'a bound value leaked')
  })

  test('the token endpoint never logs the assertion or the token it issues', async () => {
    lines.length = 0
    const tenant = await createTenant(t)
    const issued = await tenant.token()
    const text = logText()
    assert.ok(!text.includes(issued))
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{10,}\./, 'no JWT (client assertion) in the log')
  })
})
