import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { connect, type AddressInfo } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { serveMetrics } from '../../src/http/metrics.js'
import { createTenant, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'
import { freshDatabaseUrl } from '../helpers/db.js'
import { freePort } from '../platform/crash-support.js'

// `npm start` listened on every interface while its banner said 127.0.0.1, and /metrics answered anyone who could
// reach the port. Now it listens on 127.0.0.1 unless HOST says otherwise, /metrics needs the operator token or is
// served on METRICS_PORT alone; and a CONNECT request, which got no answer at all, gets the envelope.

/** Sends raw bytes and answers everything read until the server closes (or `waitMs` passes). */
function rawExchange(port: number, text: string, waitMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    let out = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve(out)
    }, waitMs)
    socket.on('data', (d) => {
      out += d
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(out)
    })
  })
}

/** An HTTP/1.1 answer as status, lower-cased headers and parsed JSON body. */
function parse(raw: string): { status: number; headers: Record<string, string>; body: any } {
  const split = raw.indexOf('\r\n\r\n')
  assert.ok(split > 0, `an HTTP answer, got ${JSON.stringify(raw)}`)
  const [statusLine, ...lines] = raw.slice(0, split).split('\r\n')
  const headers = Object.fromEntries(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  )
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: JSON.parse(raw.slice(split + 4)),
  }
}

/** Whether a TCP connection to address:port is accepted. */
function reachable(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, address)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.setTimeout(2000, () => {
      socket.destroy()
      resolve(false)
    })
  })
}

/** This machine's first IPv4 address that is not loopback (the LAN side), if it has one. */
function lanAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address
}

describe('svc serve with no HOST', () => {
  test('listens on 127.0.0.1 only and says so; METRICS_PORT serves /metrics without a token, the API port has none', {
    timeout: 150_000,
  }, async (t) => {
    const database = await freshDatabaseUrl()
    const [port, metricsPort] = [await freePort(), await freePort()]
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-listen-')),
      SVC_SEED_DEMO: 'false',
      LOG_LEVEL: 'error',
      SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
      SVC_MASTER_KEY: randomBytes(32).toString('base64'),
      ...(database.url ? { DATABASE_URL: database.url, BASE_URL: `http://127.0.0.1:${port}` } : {}),
    }
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('../../bin/svc.js', import.meta.url)), 'serve'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    let err = ''
    child.stderr.on('data', (d) => {
      err += d
    })
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no banner within 140 s; stdout: ${out}; stderr: ${err}`)),
          140_000,
        )
        child.stdout.on('data', (d) => {
          out += d
          if (out.includes('svc is listening on')) {
            clearTimeout(timer)
            setTimeout(resolve, 100)
          }
        })
        child.once('exit', (code) => {
          clearTimeout(timer)
          reject(new Error(`exited ${code}; stdout: ${out}; stderr: ${err}`))
        })
      })
      assert.match(out, new RegExp(`svc is listening on http://127\\.0\\.0\\.1:${port} \\(`))
      assert.match(
        out,
        new RegExp(
          `metrics: http://127\\.0\\.0\\.1:${metricsPort}/metrics \\(no token; not on the API port\\)`,
        ),
      )
      assert.equal(await reachable('127.0.0.1', port), true)
      const lan = lanAddress()
      if (lan) assert.equal(await reachable(lan, port), false, `the API port is closed on ${lan}`)
      else
        t.diagnostic('no non-loopback IPv4 address on this machine: the LAN side was not checked')

      const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      assert.equal(scraped.status, 200)
      assert.match(await scraped.text(), /# TYPE svc_http_requests_total counter/)
      const onApiPort = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      })
      assert.equal(onApiPort.status, 404)
      assert.equal(((await onApiPort.json()) as any).error.code, 'not_found')
      const other = await fetch(`http://127.0.0.1:${metricsPort}/healthz`)
      assert.equal(other.status, 404)
      assert.equal(((await other.json()) as any).error.code, 'not_found')
    } finally {
      child.kill('SIGTERM')
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
      await database.drop()
    }
  })
})

describe('/metrics on the API port', () => {
  let t: TestApp
  let token: string
  before(async () => {
    t = await startTestApp()
    token = await (await createTenant(t)).token()
  })
  after(() => t.close())

  const metrics = (authorization?: string) =>
    t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: authorization ? { authorization } : {},
    })

  test('without the operator token: 401 in the envelope, nothing of the metrics', async () => {
    for (const [authorization, code] of [
      [undefined, 'missing_credentials'],
      [`Bearer ${token}`, 'invalid_access_token'],
      [`Bearer ${OPERATOR_TOKEN}x`, 'invalid_access_token'],
      ['Basic b3A6', 'invalid_access_token'],
    ] as const) {
      const res = await metrics(authorization)
      assert.equal(res.statusCode, 401, String(authorization))
      assert.equal(res.json().error.code, code)
      assert.match(res.json().error.message, /operator token/)
      assert.doesNotMatch(res.body, /svc_http_requests_total/)
    }
  })

  test('with the operator token: the Prometheus text', async () => {
    const res = await metrics(`Bearer ${OPERATOR_TOKEN}`)
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /# TYPE svc_http_requests_total counter/)
  })
})

describe('with METRICS_PORT', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp({ env: { METRICS_PORT: String(await freePort()) } })
  })
  after(() => t.close())

  test('the API port has no /metrics, even with the operator token; the metrics port answers without one', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    })
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().error.code, 'not_found')
    const server = await serveMetrics(t.app.metricsRegistry, t.deps.config)
    try {
      const { port } = server.address() as AddressInfo
      const scraped = await fetch(`http://127.0.0.1:${port}/metrics`)
      assert.equal(scraped.status, 200)
      assert.match(
        await scraped.text(),
        /svc_http_requests_total\{method="GET",route="not_found",status="404"\} 1/,
      )
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('CONNECT', () => {
  let t: TestApp
  let token: string
  let port: number
  before(async () => {
    t = await startTestApp()
    token = await (await createTenant(t)).token()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as AddressInfo).port
  })
  after(() => t.close())

  test('a proxy-style CONNECT answers 404 not_found in the envelope and closes the connection (it got no answer)', async () => {
    const res = parse(
      await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
    )
    assert.equal(res.status, 404)
    assert.equal(res.body.error.code, 'not_found')
    assert.equal(res.body.error.type, 'invalid_request_error')
    assert.match(res.headers['svc-request-id'], /^req_/)
    assert.equal(res.body.error.request_id, res.headers['svc-request-id'])
    assert.equal(res.headers.connection, 'close')
  })

  test('CONNECT on an API path answers what any other wrong method answers there', async () => {
    const shape = (raw: string) => {
      const { status, headers, body } = parse(raw)
      const message = body.error.message.replace(/take (CONNECT|DELETE);/, 'take …;')
      return { status, allow: headers.allow, code: body.error.code, message }
    }
    const auth = `Authorization: Bearer ${token}\r\n`
    const connectAnswer = shape(
      await rawExchange(port, `CONNECT /v1/cardholders HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
    )
    const deleteAnswer = shape(
      await rawExchange(
        port,
        `DELETE /v1/cardholders HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
      ),
    )
    assert.deepEqual(connectAnswer, deleteAnswer)
    assert.equal(connectAnswer.status, 405)
    assert.equal(connectAnswer.allow, 'GET, HEAD, POST')
    assert.deepEqual(
      shape(await rawExchange(port, 'CONNECT /v1/cardholders HTTP/1.1\r\nHost: x\r\n\r\n')).code,
      'missing_credentials',
    )
  })

  test('a client that resets right after its CONNECT does not disturb the server', async () => {
    for (let i = 0; i < 5; i++) {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
        socket.resetAndDestroy()
      })
      socket.on('error', () => {})
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200)
  })
})
