import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, type AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import {
  KYC_UPLOAD_MIN_BYTES_PER_SECOND,
  KYC_UPLOAD_PACE_WINDOW_MS,
} from '../../src/modules/kyc/upload-pace.js'
import {
  KYC_UPLOADS_AT_ONCE,
  KYC_UPLOADS_PER_ORGANIZATION,
} from '../../src/modules/kyc/upload-slots.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { createCardholder } from '../cardholders/support.js'
import { attestationBody } from '../kyc/support.js'

// Four slow uploads from one organization used to take every upload slot of the process: every other
// organization's upload waited 2 s and answered 429, for as long as the 30 s request timeout, again and again.
// Now one organization holds at most half of the slots, and a body slower than 64 KiB/s (over a 5 s window) is
// cut off with 408 request_timeout. Real uploads over a real port, trickled from raw sockets.
let t: TestApp
let port: number

before(async () => {
  t = await startTestApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
after(() => t.close())

/** `at`: ms from the headers to the answer; `endedAt`: the clock time of the answer. */
interface Answer {
  status: number
  headers: Record<string, string>
  body: any
  at: number
  endedAt: number
}

/** An organization's token and `n` of its cardholders. */
async function organization(n: number): Promise<{ token: string; holders: string[] }> {
  const token = await (await createTenant(t)).token()
  const holders = await Promise.all(
    Array.from({ length: n }, async () => (await createCardholder(t, token)).id),
  )
  return { token, holders }
}

function uploadBody(bytes: number): Buffer {
  const file = randomBytes(Math.floor((bytes * 3) / 4))
  return Buffer.from(
    JSON.stringify(
      attestationBody(t, {
        documents: [
          {
            kind: 'passport',
            file_name: 'p.pdf',
            content_type: 'application/pdf',
            content: file.toString('base64'),
          },
        ],
      }),
    ),
  )
}

/**
 * An upload whose body is sent `chunk` bytes every `everyMs` ms, until it is all sent or the server answers; resolves
 * with the answer and when it arrived (ms since the headers were sent).
 */
function trickle(
  token: string,
  cardholderId: string,
  body: Buffer,
  chunk: number,
  everyMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const started = Date.now()
    let raw = Buffer.alloc(0)
    let sent = 0
    let timer: NodeJS.Timeout | undefined
    socket.on('error', () => {}) // writes after the server has answered may fail; the answer is what counts
    socket.on('data', (data) => {
      raw = Buffer.concat([raw, data])
      clearInterval(timer)
    })
    socket.once('close', () => {
      clearInterval(timer)
      const text = raw.toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      if (split === -1)
        return reject(
          new Error(
            `no answer after ${Date.now() - started} ms (${sent} of ${body.length} bytes sent)`,
          ),
        )
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n')
      const headers = Object.fromEntries(
        lines.map((l) => [
          l.slice(0, l.indexOf(':')).toLowerCase(),
          l.slice(l.indexOf(':') + 1).trim(),
        ]),
      )
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: JSON.parse(text.slice(split + 4)),
        at: Date.now() - started,
        endedAt: Date.now(),
      })
    })
    socket.once('connect', () => {
      socket.write(
        `POST /v1/cardholders/${cardholderId}/kyc HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      )
      timer = setInterval(() => {
        if (raw.length > 0 || socket.destroyed) return clearInterval(timer)
        socket.write(body.subarray(sent, sent + chunk))
        sent += chunk
        if (sent >= body.length) clearInterval(timer)
      }, everyMs)
    })
  })
}

describe('KYC upload slots are shared fairly between organizations', () => {
  test(`${KYC_UPLOADS_AT_ONCE} slow uploads of one organization take ${KYC_UPLOADS_PER_ORGANIZATION} slots; another organization uploads at once`, async (ctx) => {
    const greedy = await organization(KYC_UPLOADS_AT_ONCE)
    const other = await organization(1)
    // Each of the greedy uploads keeps above the pace floor (about 80 KiB/s), so only the share can stop them:
    // 240 KiB at 16 KiB per 200 ms lasts about 3 s.
    const slow = greedy.holders.map((id) =>
      trickle(greedy.token, id, uploadBody(240 * 1024), 16 * 1024, 200),
    )
    await new Promise((resolve) => setTimeout(resolve, 300))

    const sentAt = Date.now()
    const res = await fetch(`http://127.0.0.1:${port}/v1/cardholders/${other.holders[0]}/kyc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
      body: uploadBody(4096).toString(),
    })
    const answeredAt = Date.now()
    ctx.diagnostic(
      `the other organization's upload answered ${res.status} in ${answeredAt - sentAt} ms`,
    )
    assert.equal(res.status, 201, await res.clone().text())

    const answers = await Promise.all(slow)
    const firstGreedyDone = Math.min(
      ...answers.filter((a) => a.status === 201).map((a) => a.endedAt),
    )
    assert.ok(
      answeredAt < firstGreedyDone,
      'the other organization did not wait for a greedy upload to finish',
    )
    const statuses = answers.map((a) => a.status).sort()
    assert.deepEqual(
      statuses,
      [201, 201, 429, 429],
      "two of the greedy uploads ran; two waited for the organization's share and gave up",
    )
    for (const refused of answers.filter((a) => a.status === 429)) {
      assert.equal(refused.body.error.code, 'rate_limited')
      assert.match(
        refused.body.error.message,
        new RegExp(`already has ${KYC_UPLOADS_PER_ORGANIZATION} KYC uploads in progress`),
      )
      assert.equal(refused.headers['retry-after'], '2')
    }
  })

  test('a body slower than the floor is cut off with 408 after one window and frees its slot; one above it completes', async (ctx) => {
    const org = await organization(3)
    const floor = KYC_UPLOAD_MIN_BYTES_PER_SECOND
    // Below: 2 KiB every 250 ms (8 KiB/s) of a 200 KiB body, which would take 25 s, nearly the whole request timeout.
    const crawling = trickle(org.token, org.holders[0], uploadBody(200 * 1024), 2048, 250)
    // Above: about 1.5 times the floor, for about 7 s (more than one window).
    const steadyBody = uploadBody(Math.round(floor * 1.5 * 7))
    const steady = trickle(
      org.token,
      org.holders[1],
      steadyBody,
      Math.round((floor * 1.5) / 5),
      200,
    )

    const cut = await crawling
    ctx.diagnostic(`the crawling upload answered ${cut.status} after ${cut.at} ms`)
    assert.equal(cut.status, 408)
    assert.equal(cut.body.error.code, 'request_timeout')
    assert.match(cut.body.error.message, /slower than 64 KiB\/s/)
    assert.equal(cut.headers.connection, 'close')
    assert.match(cut.headers['svc-request-id'], /^req_/)
    assert.ok(
      cut.at >= KYC_UPLOAD_PACE_WINDOW_MS - 200 && cut.at < KYC_UPLOAD_PACE_WINDOW_MS + 2500,
      `cut off after ${cut.at} ms`,
    )
    assert.equal(
      (await t.api(org.token, 'GET', `/v1/cardholders/${org.holders[0]}/kyc`)).json().data.length,
      0,
      'nothing recorded',
    )

    // Its slot is free again: the organization's next upload gets it (the steady one holds the other until it ends).
    const next = await fetch(`http://127.0.0.1:${port}/v1/cardholders/${org.holders[2]}/kyc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body: uploadBody(4096).toString(),
    })
    assert.equal(next.status, 201, await next.clone().text())

    const done = await steady
    assert.equal(done.status, 201, JSON.stringify(done.body))
    assert.ok(
      done.at > KYC_UPLOAD_PACE_WINDOW_MS,
      `the steady upload took ${done.at} ms, more than one window`,
    )
  })
})
