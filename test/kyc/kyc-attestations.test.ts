import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { openWithDataKey, sha256Hex } from '../../src/lib/crypto.js'
import { documentAad } from '../../src/modules/kyc/documents.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  createCardholder,
  eventsOf,
  expectError,
  withoutRequestId,
} from '../cardholders/support.js'
import { attestationBody, documentInput, IDENTITY, PDF } from './support.js'

const MiB = 1024 * 1024

let t: TestApp
let a: TestClient
let token: string

before(async () => {
  t = await startTestApp()
  a = await createTenant(t)
  token = await a.token()
})
after(async () => {
  await t.close()
})

const kyc = (id: string, body: unknown, tk = token) =>
  t.api(tk, 'POST', `/v1/cardholders/${id}/kyc`, body)

describe('recording an attestation', () => {
  test('answers 201 with the attestation and document metadata only', async () => {
    const ch = await createCardholder(t, token)
    const body = attestationBody(t, {
      identity: IDENTITY,
      expires_at: '2099-01-01T00:00:00Z',
      documents: [
        documentInput(),
        documentInput({
          kind: 'selfie',
          file_name: 'me.png',
          content_type: 'image/png',
          content: Buffer.from('png-bytes').toString('base64'),
        }),
      ],
    })
    const res = await kyc(ch.id, body)
    assert.equal(res.statusCode, 201, res.body)
    const att = res.json()
    assert.match(att.id, /^kyc_[0-9A-Z]{26}$/)
    assert.equal(att.object, 'kyc_attestation')
    assert.equal(att.cardholder_id, ch.id)
    assert.equal(att.status, 'approved')
    assert.equal(att.provider, 'onfido')
    assert.equal(att.provider_reference, 'chk_123')
    assert.equal(att.method, 'document')
    assert.equal(att.reference, 'kyc-run-1')
    assert.equal(att.verified_at, body.verified_at)
    assert.equal(att.expires_at, '2099-01-01T00:00:00.000Z')
    assert.deepEqual(att.identity, IDENTITY)
    assert.equal(att.address, null)
    assert.deepEqual(att.documents, [
      {
        kind: 'passport',
        file_name: 'passport.pdf',
        content_type: 'application/pdf',
        size_bytes: PDF.length,
        sha256: sha256Hex(PDF),
      },
      {
        kind: 'selfie',
        file_name: 'me.png',
        content_type: 'image/png',
        size_bytes: 9,
        sha256: sha256Hex(Buffer.from('png-bytes')),
      },
    ])
    assert.ok(!res.body.includes(PDF.toString('base64')))
    assert.match(att.created_at, /Z$/)
  })

  test('only status, provider and verified_at are required', async () => {
    const ch = await createCardholder(t, token)
    const res = await kyc(ch.id, {
      status: 'pending',
      provider: 'manual-desk',
      verified_at: '2024-01-01T10:00:00+02:00',
    })
    assert.equal(res.statusCode, 201, res.body)
    const att = res.json()
    assert.equal(att.verified_at, '2024-01-01T08:00:00.000Z')
    assert.deepEqual(
      [att.method, att.expires_at, att.identity, att.provider_reference, att.reference],
      [null, null, null, null, null],
    )
    assert.deepEqual(att.documents, [])
    for (const field of ['status', 'provider', 'verified_at']) {
      expectError(
        await kyc(ch.id, attestationBody(t, { [field]: undefined })),
        400,
        'missing_parameter',
        field,
      )
    }
  })

  test('the cardholder follows the attestation and cardholder.kyc_updated carries it', async () => {
    const ch = await createCardholder(t, token)
    assert.equal((await kyc(ch.id, attestationBody(t))).statusCode, 201)
    const now = (await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json()
    assert.equal(now.kyc_status, 'approved')
    const events = (await eventsOf(t, a.organizationId, 'cardholder.kyc_updated')).filter(
      (e) => e.object.id === ch.id,
    )
    assert.equal(events.length, 1)
    assert.deepEqual(events[0].object, now)
  })

  test('a new attestation replaces the current result; both are kept, newest first', async () => {
    const ch = await createCardholder(t, token)
    const first = (await kyc(ch.id, attestationBody(t))).json()
    const second = (
      await kyc(ch.id, attestationBody(t, { status: 'rejected', reference: 'second' }))
    ).json()
    assert.equal(
      (await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json().kyc_status,
      'rejected',
    )
    const list = await t.api(token, 'GET', `/v1/cardholders/${ch.id}/kyc`)
    assert.equal(list.statusCode, 200)
    const body = list.json()
    assert.equal(body.object, 'list')
    assert.equal(body.url, `/v1/cardholders/${ch.id}/kyc`)
    assert.deepEqual(body.data, [second, first])
    const page = (await t.api(token, 'GET', `/v1/cardholders/${ch.id}/kyc?limit=1`)).json()
    assert.deepEqual(
      page.data.map((x: any) => x.id),
      [second.id],
    )
    const next = (
      await t.api(
        token,
        'GET',
        `/v1/cardholders/${ch.id}/kyc?limit=1&starting_after=${encodeURIComponent(page.next_cursor)}`,
      )
    ).json()
    assert.deepEqual(
      next.data.map((x: any) => x.id),
      [first.id],
    )
    assert.equal(next.has_more, false)
  })

  test('documents are encrypted at rest: the stored bytes do not contain the plaintext, and the master key opens them', async () => {
    const ch = await createCardholder(t, token)
    const secret = Buffer.from('PLAINTEXT-MARKER '.repeat(200))
    const res = await kyc(
      ch.id,
      attestationBody(t, {
        identity: IDENTITY,
        documents: [
          documentInput({ content: secret.toString('base64') }),
          documentInput({ content: secret.toString('base64') }),
        ],
      }),
    )
    assert.equal(res.statusCode, 201, res.body)
    const rows = await t.deps.db
      .selectFrom('kyc_documents')
      .selectAll()
      .where('attestation_id', '=', res.json().id)
      .orderBy('position')
      .execute()
    assert.equal(rows.length, 2)
    for (const row of rows) {
      const stored = Buffer.from(row.ciphertext!)
      assert.ok(!stored.includes(Buffer.from('PLAINTEXT-MARKER')))
      assert.ok(!stored.includes(Buffer.from(secret.toString('base64').slice(0, 40))))
      assert.deepEqual(
        openWithDataKey(
          t.deps.config.masterKey,
          Buffer.from(row.wrapped_key!),
          stored,
          documentAad(row.id),
        ),
        secret,
      )
    }
    // A fresh data key per document: the same file encrypts differently.
    assert.notDeepEqual(Buffer.from(rows[0].wrapped_key!), Buffer.from(rows[1].wrapped_key!))
    assert.notDeepEqual(Buffer.from(rows[0].ciphertext!), Buffer.from(rows[1].ciphertext!))
    // Bound to its row: a ciphertext moved to another document id does not open.
    assert.throws(() =>
      openWithDataKey(
        t.deps.config.masterKey,
        Buffer.from(rows[0].wrapped_key!),
        Buffer.from(rows[0].ciphertext!),
        documentAad(rows[1].id),
      ),
    )
    const attestation = await t.deps.db
      .selectFrom('kyc_attestations')
      .selectAll()
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow()
    assert.ok(!JSON.stringify(attestation).includes(IDENTITY.legal_name))
  })

  test("another organization's cardholder answers exactly like a missing one", async () => {
    const ch = await createCardholder(t, token)
    const other = await createTenant(t)
    const otherToken = await other.token()
    const missing = `chd_${'1'.repeat(26)}`
    expectError(await kyc(ch.id, attestationBody(t), otherToken), 404, 'cardholder_not_found')
    assert.deepEqual(
      withoutRequestId(await kyc(ch.id, attestationBody(t), otherToken)),
      withoutRequestId(await kyc(missing, attestationBody(t), otherToken)),
    )
    assert.deepEqual(
      withoutRequestId(await t.api(otherToken, 'GET', `/v1/cardholders/${ch.id}/kyc`)),
      withoutRequestId(await t.api(otherToken, 'GET', `/v1/cardholders/${missing}/kyc`)),
    )
    assert.equal((await t.api(token, 'GET', `/v1/cardholders/${ch.id}/kyc`)).json().data.length, 0)
  })

  test('reporting needs cardholders:write, reading needs cardholders:read', async () => {
    const ch = await createCardholder(t, token)
    expectError(
      await kyc(ch.id, attestationBody(t), await a.token('cardholders:read')),
      403,
      'insufficient_scope',
    )
    expectError(
      await t.api(await a.token('cardholders:write'), 'GET', `/v1/cardholders/${ch.id}/kyc`),
      403,
      'insufficient_scope',
    )
  })
})

describe('validation', () => {
  let id: string
  before(async () => {
    id = (await createCardholder(t, token)).id
  })

  test('values outside the allowed sets answer invalid_parameter naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ status: 'verified' }, 'status'],
      [{ method: 'telepathy' }, 'method'],
      [{ identity: { ...IDENTITY, gender: 'x' } }, 'identity.gender'],
      [{ identity: { ...IDENTITY, nationality: 'GB' } }, 'identity.nationality'],
      [
        { identity: { ...IDENTITY, document_expires_on: '2031-02-30' } },
        'identity.document_expires_on',
      ],
      [{ documents: [documentInput({ kind: 'utility_bill' })] }, 'documents[0].kind'],
      [
        { documents: [documentInput(), documentInput({ content_type: 'image/gif' })] },
        'documents[1].content_type',
      ],
      [{ verified_at: 'yesterday' }, 'verified_at'],
      [{ verified_at: '2024-01-01' }, 'verified_at'],
      [{ expires_at: '2024-13-01T00:00:00Z' }, 'expires_at'],
      [{ provider: 7 }, 'provider'],
      [
        { documents: [documentInput(), documentInput(), documentInput(), documentInput()] },
        'documents',
      ],
      [{ address: { line1: 'a', city: 'b', postal_code: 'c', country: 'ZZ' } }, 'address.country'],
    ]
    for (const [overrides, param] of cases) {
      expectError(await kyc(id, attestationBody(t, overrides)), 400, 'invalid_parameter', param)
    }
  })

  test('unknown fields answer unknown_parameter, at any depth', async () => {
    expectError(await kyc(id, attestationBody(t, { score: 99 })), 400, 'unknown_parameter', 'score')
    expectError(
      await kyc(id, attestationBody(t, { identity: { ...IDENTITY, eye_colour: 'blue' } })),
      400,
      'unknown_parameter',
      'identity.eye_colour',
    )
    expectError(
      await kyc(id, attestationBody(t, { documents: [documentInput({ url: 'https://x' })] })),
      400,
      'unknown_parameter',
      'documents[0].url',
    )
  })

  test('identity needs legal_name; a document needs every field', async () => {
    expectError(
      await kyc(id, attestationBody(t, { identity: { gender: 'male' } })),
      400,
      'missing_parameter',
      'identity.legal_name',
    )
    expectError(
      await kyc(id, attestationBody(t, { documents: [documentInput({ content: undefined })] })),
      400,
      'missing_parameter',
      'documents[0].content',
    )
  })

  test('a verified_at in the future answers invalid_parameter', async () => {
    const future = new Date(t.clock.now().getTime() + 60 * 60_000).toISOString()
    const error = expectError(
      await kyc(id, attestationBody(t, { verified_at: future })),
      400,
      'invalid_parameter',
      'verified_at',
    )
    assert.match(error.message, /future/)
  })

  test('a verified_at one minute ahead is already in the future; the current instant is accepted', async () => {
    const minuteAhead = new Date(t.clock.now().getTime() + 60_000).toISOString()
    expectError(
      await kyc(id, attestationBody(t, { verified_at: minuteAhead })),
      400,
      'invalid_parameter',
      'verified_at',
    )
    const res = await kyc(id, attestationBody(t, { verified_at: t.clock.now().toISOString() }))
    assert.equal(res.statusCode, 201, res.body)
  })

  test('an expires_at not after verified_at answers invalid_parameter', async () => {
    expectError(
      await kyc(
        id,
        attestationBody(t, {
          verified_at: '2024-05-01T00:00:00Z',
          expires_at: '2024-04-01T00:00:00Z',
        }),
      ),
      400,
      'invalid_parameter',
      'expires_at',
    )
  })

  test('content that is not base64 answers invalid_parameter', async () => {
    for (const content of [
      'not base64!',
      'QUJD*',
      'QUJDRA=',
      'QQ==QQ==',
      'Q',
      'QUJD REVG',
      '====',
      'QUJD-_',
      '\n',
    ]) {
      expectError(
        await kyc(id, attestationBody(t, { documents: [documentInput({ content })] })),
        400,
        'invalid_parameter',
        'documents[0].content',
      )
    }
    expectError(
      await kyc(id, attestationBody(t, { documents: [documentInput({ content: '' })] })),
      400,
      'invalid_parameter',
      'documents[0].content',
    )
  })

  test('base64 wrapped in lines, as the base64 command prints it, is accepted', async () => {
    const file = Buffer.from('x'.repeat(200))
    const wrapped = file.toString('base64').replace(/(.{76})/g, '$1\r\n')
    const res = await kyc(
      id,
      attestationBody(t, { documents: [documentInput({ content: wrapped })] }),
    )
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().documents[0].size_bytes, 200)
    assert.equal(res.json().documents[0].sha256, sha256Hex(file))
  })

  test('several bad documents are all reported', async () => {
    const res = await kyc(
      id,
      attestationBody(t, {
        documents: [
          documentInput({ content: '@@@@' }),
          documentInput(),
          documentInput({ content: '!!' }),
        ],
      }),
    )
    const error = expectError(res, 400, 'invalid_parameter')
    assert.deepEqual(
      error.errors.map((e: any) => e.param),
      ['documents[0].content', 'documents[2].content'],
    )
  })

  test('a document over 20 MiB decoded answers invalid_parameter; exactly 20 MiB is accepted', async () => {
    const over = 'A'.repeat(4 * 6990507) // 20 MiB + 1 byte decoded
    const error = expectError(
      await kyc(id, attestationBody(t, { documents: [documentInput({ content: over })] })),
      400,
      'invalid_parameter',
      'documents[0].content',
    )
    assert.match(error.message, /20 MiB/)
    const exact = `${'A'.repeat(4 * 6990506)}AAA=`
    const res = await kyc(
      id,
      attestationBody(t, { documents: [documentInput({ content: exact })] }),
    )
    assert.equal(res.statusCode, 201, res.body.slice(0, 500))
    assert.equal(res.json().documents[0].size_bytes, 20 * MiB)
  })

  test('a refused attestation records nothing', async () => {
    const ch = await createCardholder(t, token)
    const before = (await eventsOf(t, a.organizationId, 'cardholder.kyc_updated')).length
    expectError(
      await kyc(
        ch.id,
        attestationBody(t, { documents: [documentInput(), documentInput({ content: '%%%%' })] }),
      ),
      400,
      'invalid_parameter',
    )
    assert.equal((await t.api(token, 'GET', `/v1/cardholders/${ch.id}/kyc`)).json().data.length, 0)
    assert.equal(
      (await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json().kyc_status,
      'not_started',
    )
    assert.equal((await eventsOf(t, a.organizationId, 'cardholder.kyc_updated')).length, before)
  })
})

describe('request size', () => {
  test('the KYC route takes bodies beyond the 1 MiB limit of other routes', async () => {
    const ch = await createCardholder(t, token)
    const file = Buffer.alloc(3 * MiB, 7)
    const res = await kyc(
      ch.id,
      attestationBody(t, { documents: [documentInput({ content: file.toString('base64') })] }),
    )
    assert.equal(res.statusCode, 201, res.body.slice(0, 300))
    assert.equal(res.json().documents[0].size_bytes, 3 * MiB)
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { first_name: 'x'.repeat(2 * MiB) }),
      413,
      'request_too_large',
    )
  })

  test('a KYC body over 85 MiB answers 413 request_too_large', async () => {
    const ch = await createCardholder(t, token)
    const payload = JSON.stringify(
      attestationBody(t, { documents: [documentInput({ content: 'A'.repeat(86 * MiB) })] }),
    )
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/cardholders/${ch.id}/kyc`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload,
    })
    expectError(res, 413, 'request_too_large')
  })
})
