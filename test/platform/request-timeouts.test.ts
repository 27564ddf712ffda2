import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { BASE_URL, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

// Bounded resources: a client that sends its request slowly is cut off. The limits are shortened here
// (defaults: headers 10 s, whole request 30 s) so the file runs in a few seconds on a real port.
const HEADERS_MS = 600
const REQUEST_MS = 1500

let t: TestApp
let port: number
let token: string

before(async () => {
  t = await startTestApp({
    env: { HEADERS_TIMEOUT_MS: String(HEADERS_MS), REQUEST_TIMEOUT_MS: String(REQUEST_MS) },
  })
  token = await (await createTenant(t)).token()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
after(() => t.close())

interface Exchange {
  head: string
  body: string
  ms: number
  closed: boolean
}

/**
 * Sends `start`, then one byte of `drip` every 100 ms (never all of it), and reads until the server closes the
 * connection or 5 s pass.
 */
function trickle(start: string, drip: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const began = Date.now()
    let out = ''
    let i = 0
    let timer: NodeJS.Timeout | undefined
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(start)
      timer = setInterval(() => {
        if (i < drip.length - 1 && socket.writable) socket.write(drip[i++])
      }, 100)
    })
    const give = setTimeout(() => finish(false), 5000)
    const finish = (closed: boolean) => {
      clearInterval(timer)
      clearTimeout(give)
      socket.destroy()
      const [head, body = ''] = out.split('\r\n\r\n')
      resolve({ head, body, ms: Date.now() - began, closed })
    }
    socket.on('data', (chunk) => {
      out += chunk.toString('utf8')
    })
    socket.on('close', () => finish(true))
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err)
    })
  })
}

describe('slow requests are cut off', () => {
  test('headers that do not arrive within HEADERS_TIMEOUT_MS answer 408 request_timeout in the envelope and close the connection', async () => {
    const r = await trickle(
      'GET /v1/programs HTTP/1.1\r\nHost: localhost\r\n',
      `X-Slow: ${'a'.repeat(200)}\r\n\r\n`,
    )
    assert.equal(r.closed, true, 'the server closed the connection')
    assert.ok(r.ms >= HEADERS_MS - 50 && r.ms < HEADERS_MS + 1200, `cut off after ${r.ms} ms`)
    assert.match(r.head, /^HTTP\/1\.1 408 /)
    assert.match(r.head, /connection: close/i)
    const requestId = /svc-request-id: (req_\w+)/i.exec(r.head)?.[1]
    const { error } = JSON.parse(r.body)
    assert.equal(error.code, 'request_timeout')
    assert.equal(error.type, 'invalid_request_error')
    assert.equal(error.request_id, requestId)
    assert.equal(error.doc_url, `${BASE_URL}/docs/errors#request_timeout`)
    assert.match(error.message, /headers did not arrive within 600 ms/)
  })

  test('a body that does not arrive within REQUEST_TIMEOUT_MS answers 408 request_timeout in the envelope', async () => {
    const body = JSON.stringify({
      type: 'individual',
      first_name: 'Slow',
      last_name: 'Loris',
      email: 'slow@example.com',
    })
    const r = await trickle(
      `POST /v1/cardholders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    )
    assert.equal(r.closed, true)
    assert.ok(r.ms >= REQUEST_MS - 50 && r.ms < REQUEST_MS + 1200, `cut off after ${r.ms} ms`)
    assert.match(r.head, /^HTTP\/1\.1 408 /)
    const { error } = JSON.parse(r.body)
    assert.equal(error.code, 'request_timeout')
    assert.match(error.message, /body did not arrive within 1500 ms/)
    // Nothing was created from the half-sent body.
    const list = await t.api(token, 'GET', '/v1/cardholders')
    assert.equal(list.json().data.length, 0)
  })

  test('a trickled body at the token endpoint is cut off with the flat OAuth shape', async () => {
    const form = `grant_type=client_credentials&client_assertion_type=x&client_assertion=${'y'.repeat(200)}`
    const r = await trickle(
      `POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n`,
      form,
    )
    assert.equal(r.closed, true)
    assert.ok(r.ms >= REQUEST_MS - 50 && r.ms < REQUEST_MS + 1200, `cut off after ${r.ms} ms`)
    assert.match(r.head, /^HTTP\/1\.1 408 /)
    assert.match(r.head, /cache-control: no-store/i)
    const json = JSON.parse(r.body)
    assert.deepEqual(Object.keys(json).sort(), ['error', 'error_description'])
    assert.equal(json.error, 'invalid_request')
  })

  test('a request that arrives in time is answered as usual while slow ones are pending', async () => {
    const slow = trickle(
      'GET /v1/programs HTTP/1.1\r\nHost: localhost\r\n',
      'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n',
    )
    const res = await fetch(`http://127.0.0.1:${port}/v1/programs`, {
      headers: { authorization: `Bearer ${token}` },
    })
    assert.equal(res.status, 200)
    assert.match((await slow).head, /^HTTP\/1\.1 408 /)
  })
})
