import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { openWithDataKey, sha256Hex } from '../../src/lib/crypto.js'
import { documentAad } from '../../src/modules/kyc/documents.js'
import {
  KYC_UPLOAD_RETRY_AFTER_SECONDS,
  KYC_UPLOAD_WAIT_MS,
  KYC_UPLOADS_AT_ONCE,
} from '../../src/modules/kyc/upload-slots.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { createCardholder } from '../cardholders/support.js'
import { attestationBody } from './support.js'

// At most KYC_UPLOADS_AT_ONCE uploads are received and stored at once per process, at most half of them by one
// organization; another waits up to KYC_UPLOAD_WAIT_MS for a slot, then answers 429 rate_limited with Retry-After.
// Over a real port, with uploads held open by sending only part of their body (for less than the pace window).
let t: TestApp
/** Tokens of two organizations, each holding half of the slots in the tests, and of a third. */
let tokens: string[]
let port: number

before(async () => {
  t = await startTestApp()
  tokens = []
  for (let i = 0; i < 3; i++) tokens.push(await (await createTenant(t)).token())
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
after(() => t.close())

/** Upload `i` belongs to one organization or the other, alternately: neither goes past its share. */
const tokenOf = (i: number) => tokens[i % 2]

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function uploadBody(file: Buffer): string {
  return JSON.stringify(
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
  )
}

interface Held {
  finish(): Promise<{ status: number; body: any }>
  socket: Socket
}

/** An upload whose headers and first half of body are sent; `finish()` sends the rest and reads the answer. */
async function holdUpload(token: string, cardholderId: string, body: string): Promise<Held> {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  let raw = ''
  socket.on('data', (chunk) => {
    raw += chunk.toString('utf8')
  })
  const ended = new Promise<void>((resolve) => {
    socket.once('end', resolve)
    socket.once('close', resolve)
  })
  const half = Math.floor(body.length / 2)
  socket.write(
    `POST /v1/cardholders/${cardholderId}/kyc HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, half)}`,
  )
  return {
    socket,
    async finish() {
      socket.write(body.slice(half))
      await ended
      const [head, text] = raw.split('\r\n\r\n')
      return { status: Number(head.split(' ')[1]), body: JSON.parse(text) }
    },
  }
}

async function upload(token: string, cardholderId: string, body: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/v1/cardholders/${cardholderId}/kyc`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  })
}

describe('KYC uploads at once', () => {
  test(`beyond ${KYC_UPLOADS_AT_ONCE} uploads in progress (two organizations), another waits then answers 429 rate_limited with Retry-After; the held ones complete`, async () => {
    const files = Array.from({ length: KYC_UPLOADS_AT_ONCE }, () => randomBytes(64 * 1024))
    const holders = await Promise.all(files.map((_, i) => createCardholder(t, tokenOf(i))))
    const held: Held[] = []
    for (let i = 0; i < files.length; i++)
      held.push(await holdUpload(tokenOf(i), holders[i].id, uploadBody(files[i])))
    await sleep(200) // each has passed authentication and holds its slot

    // A third organization, under its share: only the process's slots are missing.
    const token = tokens[2]
    const extra = await createCardholder(t, token)
    const started = Date.now()
    const refused = await upload(token, extra.id, uploadBody(randomBytes(1024)))
    const waited = Date.now() - started
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), String(KYC_UPLOAD_RETRY_AFTER_SECONDS))
    assert.match(refused.headers.get('svc-request-id') ?? '', /^req_/)
    const { error } = (await refused.json()) as { error: Record<string, string> }
    assert.equal(error.code, 'rate_limited')
    assert.equal(error.type, 'rate_limit_error')
    assert.equal(error.request_id, refused.headers.get('svc-request-id'))
    assert.ok(waited >= KYC_UPLOAD_WAIT_MS - 100, `waited ${waited} ms for a slot first`)
    assert.equal(
      (await t.api(token, 'GET', `/v1/cardholders/${extra.id}/kyc`)).json().data.length,
      0,
      'nothing recorded',
    )

    // Other routes are not held up by the uploads.
    assert.equal((await t.api(token, 'GET', '/v1/cardholders')).statusCode, 200)

    const answers = await Promise.all(held.map((h) => h.finish()))
    answers.forEach((answer, i) => {
      assert.equal(answer.status, 201, JSON.stringify(answer.body))
      assert.equal(answer.body.documents[0].sha256, sha256Hex(files[i]))
    })

    // Once they are done the refused upload goes through.
    const retried = await upload(token, extra.id, uploadBody(randomBytes(1024)))
    assert.equal(retried.status, 201, await retried.clone().text())
  })

  test('an upload that finds every slot taken waits for one to free up instead of being refused', async () => {
    const holders = await Promise.all(
      Array.from({ length: KYC_UPLOADS_AT_ONCE + 1 }, (_, i) => createCardholder(t, tokenOf(i))),
    )
    const held: Held[] = []
    for (let i = 0; i < KYC_UPLOADS_AT_ONCE; i++)
      held.push(await holdUpload(tokenOf(i), holders[i].id, uploadBody(randomBytes(4096))))
    await sleep(200)
    const file = randomBytes(300 * 1024)
    // Of the organization of held[0]: the slot held[0] frees is its own.
    const waiting = upload(
      tokenOf(KYC_UPLOADS_AT_ONCE),
      holders[KYC_UPLOADS_AT_ONCE].id,
      uploadBody(file),
    )
    await sleep(KYC_UPLOAD_WAIT_MS / 4)
    const first = await held[0].finish()
    assert.equal(first.status, 201)
    const res = await waiting
    assert.equal(res.status, 201, await res.clone().text())
    const attestation = (await res.json()) as {
      id: string
      documents: { sha256: string; size_bytes: number }[]
    }
    assert.deepEqual(
      attestation.documents.map((d) => [d.sha256, d.size_bytes]),
      [[sha256Hex(file), file.length]],
    )
    // Stored encrypted and opened back to the very bytes sent.
    const row = await t.deps.db
      .selectFrom('kyc_documents')
      .selectAll()
      .where('attestation_id', '=', attestation.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(
      openWithDataKey(
        t.deps.config.masterKey,
        Buffer.from(row.wrapped_key!),
        Buffer.from(row.ciphertext!),
        documentAad(row.id),
      ),
      file,
    )
    for (const h of held.slice(1)) assert.equal((await h.finish()).status, 201)
  })

  test('a client that goes away while holding or waiting for a slot gives it back', async () => {
    const holders = await Promise.all(
      Array.from({ length: KYC_UPLOADS_AT_ONCE + 1 }, (_, i) => createCardholder(t, tokenOf(i))),
    )
    const held: Held[] = []
    for (let i = 0; i < KYC_UPLOADS_AT_ONCE; i++)
      held.push(await holdUpload(tokenOf(i), holders[i].id, uploadBody(randomBytes(4096))))
    const waiter = await holdUpload(
      tokenOf(KYC_UPLOADS_AT_ONCE),
      holders[KYC_UPLOADS_AT_ONCE].id,
      uploadBody(randomBytes(4096)),
    )
    await sleep(200)
    for (const h of [...held, waiter]) h.socket.destroy()
    await sleep(200)
    const started = Date.now()
    const results = await Promise.all(
      holders
        .slice(0, KYC_UPLOADS_AT_ONCE)
        .map((h, i) => upload(tokenOf(i), h.id, uploadBody(randomBytes(2048)))),
    )
    assert.deepEqual(
      results.map((r) => r.status),
      Array(KYC_UPLOADS_AT_ONCE).fill(201),
    )
    assert.ok(
      Date.now() - started < KYC_UPLOAD_WAIT_MS,
      'no upload had to wait for an abandoned slot',
    )
  })
})
