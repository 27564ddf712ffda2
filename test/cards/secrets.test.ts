import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { compactDecrypt, importJWK, CompactEncrypt } from 'jose'
import { luhnValid } from '../../src/modules/cards/card-numbers.js'
import { eventsFor, expectError } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, encryptPin, issuedCard, makeAccount, makeCardholder } from './support.js'

const logLines: string[] = []
let t: TestApp
let tenant: TestClient
let token: string
const callerKeys = generateKeyPairSync('rsa', { modulusLength: 2048 })

withTenant((fixture) => ({ t, tenant, token } = fixture), {
  app: {
    env: { LOG_LEVEL: 'trace' },
    logDestination: {
      write: (line: string) => {
        logLines.push(line)
      },
    },
  },
})

async function physicalActive(programId = tenant.programs.full.id): Promise<any> {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, programId, holder.id)
  const card = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  const res = await t.api(token, 'POST', `/v1/cards/${card.id}/activate`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function pinKey(cardId: string): Promise<any> {
  const res = await t.api(token, 'POST', `/v1/cards/${cardId}/pin-key`)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const sendPin = (cardId: string, key: any, encrypted: string, path = 'pin') =>
  t.api(token, 'POST', `/v1/cards/${cardId}/${path}`, {
    pin_key_id: key.id,
    encrypted_pin: encrypted,
  })

async function openDetails(res: { statusCode: number; body: string; json(): any }): Promise<any> {
  assert.equal(res.statusCode, 200, res.body)
  const body = res.json()
  assert.equal(body.object, 'card_details')
  const { plaintext, protectedHeader } = await compactDecrypt(
    body.encrypted_details,
    callerKeys.privateKey,
  )
  assert.equal(protectedHeader.alg, 'RSA-OAEP-256')
  assert.equal(protectedHeader.enc, 'A256GCM')
  return JSON.parse(new TextDecoder().decode(plaintext))
}

test('pin-key answers 201 with a fresh 2048-bit RSA-OAEP-256 key valid for 5 minutes, in JWK and PEM', async () => {
  const card = await physicalActive()
  const key = await pinKey(card.id)
  assert.equal(key.object, 'pin_key')
  assert.match(key.id, /^pink_[0-9A-Z]{26}$/)
  assert.equal(key.algorithm, 'RSA-OAEP-256')
  assert.equal(key.public_key.kty, 'RSA')
  assert.equal(key.public_key.alg, 'RSA-OAEP-256')
  assert.equal(key.public_key.d, undefined)
  assert.equal(createPublicKey(key.public_key_pem).asymmetricKeyDetails?.modulusLength, 2048)
  assert.equal(
    createPublicKey({ key: key.public_key, format: 'jwk' }).asymmetricKeyDetails?.modulusLength,
    2048,
  )
  assert.equal(
    new Date(key.expires_at).getTime() - new Date(key.created_at).getTime(),
    5 * 60 * 1000,
  )
  const second = await t.api(token, 'POST', `/v1/cards/${card.id}/pin-key`, undefined, {
    'idempotency-key': 'same-key',
  })
  const third = await t.api(token, 'POST', `/v1/cards/${card.id}/pin-key`, undefined, {
    'idempotency-key': 'same-key',
  })
  assert.notEqual(
    second.json().id,
    third.json().id,
    'Idempotency-Key is accepted but every call mints a new key',
  )
  assert.equal(third.headers['idempotent-replay'], undefined)
  // A client using jose (WebCrypto) can encrypt to the JWK directly.
  assert.ok(await importJWK(key.public_key, 'RSA-OAEP-256'))
})

test('set and verify a PIN; each key is spent by its first use whatever the outcome', async () => {
  const card = await physicalActive()
  const key = await pinKey(card.id)
  const set = await sendPin(card.id, key, encryptPin(key.public_key_pem, '739182645103'))
  assert.equal(set.statusCode, 200, set.body)
  assert.equal(set.json().object, 'card')
  assert.equal(set.json().pin_set, true)
  assert.equal((await eventsFor(t, card.id, 'card.pin_set')).length, 1)
  expectError(
    await sendPin(card.id, key, encryptPin(key.public_key_pem, '1234')),
    404,
    'token_not_found',
    'pin_key_id',
  )

  const k2 = await pinKey(card.id)
  const match = await sendPin(
    card.id,
    k2,
    encryptPin(k2.public_key_pem, '739182645103'),
    'pin/verify',
  )
  assert.equal(match.statusCode, 200, match.body)
  assert.deepEqual(match.json(), { object: 'pin_verification', card_id: card.id, match: true })
  const k3 = await pinKey(card.id)
  assert.equal(
    (await sendPin(card.id, k3, encryptPin(k3.public_key_pem, '0000'), 'pin/verify')).json().match,
    false,
  )
  expectError(
    await sendPin(card.id, k3, encryptPin(k3.public_key_pem, '0000'), 'pin/verify'),
    404,
    'token_not_found',
  )

  // A refused PIN still spends the key.
  const k4 = await pinKey(card.id)
  expectError(
    await sendPin(card.id, k4, encryptPin(k4.public_key_pem, '12a4')),
    422,
    'pin_invalid',
    'encrypted_pin',
  )
  expectError(
    await sendPin(card.id, k4, encryptPin(k4.public_key_pem, '4321')),
    404,
    'token_not_found',
  )

  // The processor keeps only a hash: the PIN digits are nowhere in its records.
  const stored = await t.deps.db
    .selectFrom('sim_processor_objects')
    .select('data')
    .where('key', '=', card.id)
    .executeTakeFirstOrThrow()
  assert.ok(!JSON.stringify(stored.data).includes('739182645103'))
  const other = await physicalActive()
  const k5 = await pinKey(other.id)
  assert.equal(
    (
      await sendPin(other.id, k5, encryptPin(k5.public_key_pem, '739182645103'), 'pin/verify')
    ).json().match,
    false,
    'no PIN set yet',
  )
})

test('a PIN is 4–12 digits encrypted to the key given; anything else is pin_invalid and nothing reaches the processor', async () => {
  const card = await physicalActive()
  for (const bad of ['123', '1234567890123', 'abcd', '12 34', '']) {
    const key = await pinKey(card.id)
    expectError(
      await sendPin(card.id, key, encryptPin(key.public_key_pem, bad)),
      422,
      'pin_invalid',
    )
  }
  const key = await pinKey(card.id)
  const wrongKey = await pinKey(card.id)
  expectError(
    await sendPin(card.id, key, encryptPin(wrongKey.public_key_pem, '1234')),
    422,
    'pin_invalid',
  )
  const k2 = await pinKey(card.id)
  expectError(await sendPin(card.id, k2, 'bm90IGVuY3J5cHRlZA=='), 422, 'pin_invalid')
  // A JWE-wrapped PIN is not what the key expects either.
  const k3 = await pinKey(card.id)
  const jwe = await new CompactEncrypt(new TextEncoder().encode('1234'))
    .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
    .encrypt(createPublicKey(k3.public_key_pem))
  expectError(await sendPin(card.id, k3, jwe), 422, 'pin_invalid')
  assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().pin_set, false)
  assert.equal((await eventsFor(t, card.id, 'card.pin_set')).length, 0)
  const calls = await t.deps.db
    .selectFrom('processor_operations')
    .select('operation')
    .where('subject_id', '=', card.id)
    .where('operation', '=', 'set_pin')
    .execute()
  assert.equal(calls.length, 0)
})

test("keys expire after 5 minutes and belong to one card: another card's or program's key is token_not_found and is spent", async () => {
  const card = await physicalActive()
  const key = await pinKey(card.id)
  t.clock.advance(5 * 60 * 1000 + 1000)
  token = await tenant.token()
  expectError(
    await sendPin(card.id, key, encryptPin(key.public_key_pem, '1234')),
    404,
    'token_not_found',
  )

  const sibling = await physicalActive()
  const siblingKey = await pinKey(sibling.id)
  expectError(
    await sendPin(card.id, siblingKey, encryptPin(siblingKey.public_key_pem, '1234')),
    404,
    'token_not_found',
  )
  // Sent with a PIN, the key is spent whatever the outcome: also for the card it was minted for.
  expectError(
    await sendPin(sibling.id, siblingKey, encryptPin(siblingKey.public_key_pem, '1234')),
    404,
    'token_not_found',
  )

  const second = await t.operator('POST', '/operator/v1/programs', {
    organization_id: tenant.organizationId,
    environment: 'sandbox',
    name: 'Full 2',
    processor: 'sim_full',
    currencies: ['USD'],
  })
  const foreign = await physicalActive(second.id)
  const foreignKey = await pinKey(foreign.id)
  expectError(
    await sendPin(card.id, foreignKey, encryptPin(foreignKey.public_key_pem, '1234')),
    404,
    'token_not_found',
  )
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/pin`, {
      pin_key_id: 'pink_nope',
      encrypted_pin: 'AAAA',
    }),
    404,
    'token_not_found',
  )
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/pin`, { pin_key_id: key.id }),
    400,
    'missing_parameter',
    'encrypted_pin',
  )
})

test('only an active physical card takes a PIN: card_invalid_state, card_closed, card_not_provisioned', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const virtual = await issuedCard(t, token, cardBody(holder.id, account.id))
  expectError(
    await t.api(token, 'POST', `/v1/cards/${virtual.id}/pin-key`),
    422,
    'card_invalid_state',
  )
  const inactive = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  expectError(
    await t.api(token, 'POST', `/v1/cards/${inactive.id}/pin-key`),
    422,
    'card_invalid_state',
  )
  const pending = (
    await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
    )
  ).json()
  expectError(
    await t.api(token, 'POST', `/v1/cards/${pending.id}/pin-key`),
    422,
    'card_not_provisioned',
  )

  const card = await physicalActive()
  const key = await pinKey(card.id)
  await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`)
  expectError(await t.api(token, 'POST', `/v1/cards/${card.id}/pin-key`), 422, 'card_invalid_state')
  expectError(
    await sendPin(card.id, key, encryptPin(key.public_key_pem, '1234')),
    422,
    'card_invalid_state',
  )
  await t.api(token, 'POST', `/v1/cards/${card.id}/unfreeze`)
  expectError(
    await sendPin(card.id, key, encryptPin(key.public_key_pem, '1234')),
    404,
    'token_not_found',
  )
  await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  expectError(await t.api(token, 'POST', `/v1/cards/${card.id}/pin-key`), 422, 'card_closed')
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
      public_key: callerKeys.publicKey.export({ format: 'jwk' }),
    }),
    422,
    'card_closed',
  )
})

test('sim_basic has no card_pin: the PIN routes answer the same 404 as an unknown path; program_not_configured without a PIN key', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.basic.id, holder.id)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const unknown = await t.api(token, 'POST', `/v1/cards/${card.id}/pin-keys`)
  for (const path of ['pin-key', 'pin', 'pin/verify']) {
    const res = await t.api(token, 'POST', `/v1/cards/${card.id}/${path}`, {
      pin_key_id: 'pink_x',
      encrypted_pin: 'AAAA',
    })
    assert.equal(res.statusCode, 404, path)
    assert.deepEqual(
      { ...res.json().error, request_id: null },
      { ...unknown.json().error, request_id: null },
    )
    assert.equal(res.headers['content-type'], unknown.headers['content-type'])
  }
  const noPinKey = await t.operator('POST', '/operator/v1/programs', {
    organization_id: tenant.organizationId,
    environment: 'sandbox',
    name: 'No PIN key',
    processor: 'sim_full',
    currencies: ['USD'],
    pin_key_configured: false,
  })
  const unconfigured = await physicalActive(noPinKey.id)
  expectError(
    await t.api(token, 'POST', `/v1/cards/${unconfigured.id}/pin-key`),
    422,
    'program_not_configured',
  )
  expectError(
    await t.api(token, 'POST', `/v1/cards/${unconfigured.id}/pin`, {
      pin_key_id: 'pink_x',
      encrypted_pin: 'AAAA',
    }),
    422,
    'program_not_configured',
  )
})

test('card details: a JWE of number, cvc and expiry that the caller decrypts with jose, for JWK and PEM keys, on both processors', async () => {
  for (const [program, bin] of [
    ['full', '42424200'],
    ['basic', '52525200'],
  ] as const) {
    const holder = await makeCardholder(t, token)
    const account = await makeAccount(t, token, tenant.programs[program].id, holder.id)
    const card = await issuedCard(t, token, cardBody(holder.id, account.id))
    const viaJwk = await openDetails(
      await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
        public_key: callerKeys.publicKey.export({ format: 'jwk' }),
      }),
    )
    assert.deepEqual(Object.keys(viaJwk).sort(), ['cvc', 'exp_month', 'exp_year', 'number'])
    assert.equal(viaJwk.number.length, 16)
    assert.ok(viaJwk.number.startsWith(bin), program)
    assert.ok(luhnValid(viaJwk.number))
    assert.equal(viaJwk.number.slice(-4), card.last4)
    assert.match(viaJwk.cvc, /^[0-9]{3}$/)
    assert.equal(viaJwk.exp_month, card.exp_month)
    assert.equal(viaJwk.exp_year, card.exp_year)
    const viaPem = await openDetails(
      await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
        public_key: callerKeys.publicKey.export({ type: 'spki', format: 'pem' }),
      }),
    )
    assert.deepEqual(viaPem, viaJwk)
    const listed = JSON.stringify(
      (await t.api(token, 'GET', `/v1/cards?cardholder_id=${holder.id}`)).json(),
    )
    assert.ok(!listed.includes(viaJwk.number), 'lists never carry the number')
  }
})

test('card details refuse weak, private, non-RSA or malformed keys with invalid_public_key', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const details = (public_key: unknown) =>
    t.api(token, 'POST', `/v1/cards/${card.id}/details`, { public_key })
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 })
  expectError(
    await details(weak.publicKey.export({ format: 'jwk' })),
    400,
    'invalid_public_key',
    'public_key',
  )
  expectError(
    await details(weak.publicKey.export({ type: 'spki', format: 'pem' })),
    400,
    'invalid_public_key',
  )
  expectError(
    await details(callerKeys.privateKey.export({ format: 'jwk' })),
    400,
    'invalid_public_key',
  )
  expectError(
    await details(
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
    ),
    400,
    'invalid_public_key',
  )
  expectError(await details('not a key'), 400, 'invalid_public_key')
  expectError(await details({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }), 400, 'invalid_public_key')
  for (const malformed of [
    '',
    12345,
    true,
    [],
    ['-----BEGIN PUBLIC KEY-----'],
    'x'.repeat(20_000),
  ]) {
    expectError(await details(malformed), 400, 'invalid_public_key', 'public_key')
  }
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {}),
    400,
    'missing_parameter',
    'public_key',
  )
  const pending = (await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id))).json()
  expectError(
    await t.api(token, 'POST', `/v1/cards/${pending.id}/details`, {
      public_key: callerKeys.publicKey.export({ format: 'jwk' }),
    }),
    422,
    'card_not_provisioned',
  )
})

test('cards:secrets is required, is not implied by cards:write, and every use is audited without secret values', async () => {
  const card = await physicalActive()
  const writer = await tenant.token('cards:write cards:read')
  expectError(
    await t.api(writer, 'POST', `/v1/cards/${card.id}/pin-key`),
    403,
    'insufficient_scope',
  )
  expectError(
    await t.api(writer, 'POST', `/v1/cards/${card.id}/details`, {
      public_key: callerKeys.publicKey.export({ format: 'jwk' }),
    }),
    403,
    'insufficient_scope',
  )

  const before = await t.deps.db
    .selectFrom('card_secret_audit')
    .select('id')
    .where('card_id', '=', card.id)
    .execute()
  assert.equal(before.length, 0, 'refused by scope: not a use')
  const key = await pinKey(card.id)
  await sendPin(card.id, key, encryptPin(key.public_key_pem, '864209'))
  const k2 = await pinKey(card.id)
  await sendPin(card.id, k2, encryptPin(k2.public_key_pem, '864209'), 'pin/verify')
  await sendPin(card.id, k2, encryptPin(k2.public_key_pem, '864209'), 'pin/verify')
  const details = await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
    public_key: callerKeys.publicKey.export({ format: 'jwk' }),
  })
  const number = (await openDetails(details)).number
  const rows = await t.deps.db
    .selectFrom('card_secret_audit')
    .selectAll()
    .where('card_id', '=', card.id)
    .orderBy('id')
    .execute()
  assert.deepEqual(
    rows.map((r) => [r.operation, r.outcome]),
    [
      ['pin_key.create', 'succeeded'],
      ['pin.set', 'succeeded'],
      ['pin_key.create', 'succeeded'],
      ['pin.verify', 'succeeded'],
      ['pin.verify', 'token_not_found'],
      ['details.reveal', 'succeeded'],
    ],
  )
  for (const row of rows) {
    assert.equal(row.client_id, tenant.clientId)
    assert.equal(row.organization_id, tenant.organizationId)
    assert.match(row.request_id, /^req_/)
    assert.ok(row.created_at instanceof Date)
    const text = JSON.stringify(row)
    assert.ok(!text.includes('864209') && !text.includes(number))
  }
})

test('neither the card number nor a PIN ever reaches the logs', async () => {
  const card = await physicalActive()
  const details = await openDetails(
    await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
      public_key: callerKeys.publicKey.export({ format: 'jwk' }),
    }),
  )
  const key = await pinKey(card.id)
  await sendPin(card.id, key, encryptPin(key.public_key_pem, '918273645546'))
  await t.api(token, 'POST', '/v1/cards', { pan: details.number, pin: '918273645546' })
  await t.api(token, 'POST', '/v1/simulate/processor_faults', {
    operation: 'reveal_details',
    error: 'processor_unavailable',
    count: 1,
  })
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
      public_key: callerKeys.publicKey.export({ format: 'jwk' }),
    }),
    502,
    'processor_unavailable',
  )
  const logs = logLines.join('\n')
  assert.ok(logs.includes('"route":"/v1/cards/:card_id/details"'), 'the details calls were logged')
  assert.ok(logs.includes('processor call failed'), 'the processor failure was logged')
  assert.ok(!logs.includes(details.number), 'a PAN was logged')
  assert.ok(!logs.includes('918273645546'), 'a PIN was logged')
})
