import { test } from 'node:test'
import assert from 'node:assert/strict'
import { constants, createPublicKey, generateKeyPairSync, publicEncrypt } from 'node:crypto'
import { compactDecrypt, importJWK } from 'jose'
import { ApiError } from '../../src/http/errors.js'
import {
  expiryInstant,
  isPastExpiry,
  luhnCheckDigit,
  luhnValid,
} from '../../src/modules/cards/card-numbers.js'
import { withLuhn } from '../../src/processors/sim-processor.js'
import { encryptDetails, importCallerKey } from '../../src/modules/cards/card-details-crypto.js'
import {
  requireCompleteAddress,
  requireEmbossedName,
} from '../../src/modules/cards/delivery-address.js'
import {
  CARD_STATUSES,
  nextShippingStatus,
  planMove,
  type CardOperation,
  type CardStatus,
} from '../../src/modules/cards/lifecycle.js'
import { createPinKeyPair, decryptPin, isValidPin } from '../../src/modules/cards/pin-crypto.js'
import {
  assertSpendControlsSupported,
  emptySpendingControls,
  mergeSpendingControls,
} from '../../src/modules/cards/spending-controls.js'

function code(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    if (err instanceof ApiError) return err.code
    throw err
  }
  return 'ok'
}

test('Luhn check digit matches known card numbers and rejects a changed digit', () => {
  assert.equal(luhnCheckDigit('424242424242424'), '2')
  assert.ok(luhnValid('4242424242424242'))
  assert.ok(luhnValid('5555555555554444'))
  assert.ok(!luhnValid('4242424242424241'))
  assert.ok(!luhnValid('42424242424242a2'))
  for (let i = 0; i < 100; i++)
    assert.ok(luhnValid(withLuhn(`42424200${String(i).padStart(7, '0')}`)))
})

test('a card expires when its expiry month has ended, not before', () => {
  assert.equal(expiryInstant(12, 2029).toISOString(), '2030-01-01T00:00:00.000Z')
  assert.equal(expiryInstant(2, 2028).toISOString(), '2028-03-01T00:00:00.000Z')
  assert.ok(!isPastExpiry(2, 2028, new Date('2028-02-29T23:59:59Z')))
  assert.ok(isPastExpiry(2, 2028, new Date('2028-03-01T00:00:00Z')))
  assert.ok(!isPastExpiry(null, null, new Date()))
})

test('state table: every operation from every status gives the decided move or named refusal', () => {
  const expected: Record<CardStatus, Partial<Record<CardOperation, string>>> = {
    pending: {
      activate: 'card_not_provisioned',
      freeze: 'card_not_provisioned',
      unfreeze: 'card_not_provisioned',
      close: 'card_not_provisioned',
      replace: 'card_not_provisioned',
      pin: 'card_not_provisioned',
      details: 'card_not_provisioned',
      reveal: 'card_not_provisioned',
      ship: 'card_not_provisioned',
      update: 'pending',
    },
    inactive: {
      activate: 'active',
      freeze: 'card_invalid_state',
      unfreeze: 'card_invalid_state',
      close: 'closed',
      replace: 'inactive',
      pin: 'card_invalid_state',
      details: 'inactive',
      reveal: 'inactive',
      ship: 'inactive',
      update: 'inactive',
    },
    active: {
      activate: 'card_already_activated',
      freeze: 'frozen',
      unfreeze: 'card_invalid_state',
      close: 'closed',
      replace: 'active',
      pin: 'active',
      details: 'active',
      reveal: 'active',
      ship: 'active',
      update: 'active',
    },
    frozen: {
      activate: 'card_invalid_state',
      freeze: 'card_invalid_state',
      unfreeze: 'active',
      close: 'closed',
      replace: 'frozen',
      pin: 'card_invalid_state',
      details: 'frozen',
      reveal: 'card_invalid_state',
      ship: 'frozen',
      update: 'frozen',
    },
    expired: {
      activate: 'card_invalid_state',
      freeze: 'card_invalid_state',
      unfreeze: 'card_invalid_state',
      close: 'closed',
      replace: 'expired',
      pin: 'card_invalid_state',
      details: 'expired',
      reveal: 'card_invalid_state',
      ship: 'card_invalid_state',
      update: 'expired',
    },
    closed: {
      activate: 'card_closed',
      freeze: 'card_closed',
      unfreeze: 'card_closed',
      close: 'card_closed',
      replace: 'card_closed',
      pin: 'card_closed',
      details: 'card_closed',
      reveal: 'card_closed',
      ship: 'card_closed',
      update: 'card_closed',
    },
  }
  for (const status of CARD_STATUSES) {
    for (const [op, outcome] of Object.entries(expected[status])) {
      const move = planMove(status, 'physical', op as CardOperation)
      assert.equal(move.ok ? move.next : move.code, outcome, `${status} + ${op}`)
    }
  }
  const virtualPin = planMove('active', 'virtual', 'pin')
  assert.equal(virtualPin.ok ? 'ok' : virtualPin.code, 'card_invalid_state')
  const virtualShip = planMove('active', 'virtual', 'ship')
  assert.equal(virtualShip.ok ? 'ok' : virtualShip.code, 'card_invalid_state')
})

test('shipping moves pending → shipped → delivered and never backwards', () => {
  assert.equal(nextShippingStatus('pending', undefined), 'shipped')
  assert.equal(nextShippingStatus('shipped', undefined), 'delivered')
  assert.equal(nextShippingStatus('pending', 'delivered'), null)
  assert.equal(nextShippingStatus('delivered', undefined), null)
})

test('delivery address is complete only with name, line1, city, postal_code and country', () => {
  const full = {
    name: 'Ada',
    line1: '1 Main St',
    city: 'Paris',
    postal_code: '75001',
    country: 'fra',
  }
  assert.equal(requireCompleteAddress(full).country, 'FRA')
  assert.equal(
    code(() => requireCompleteAddress(undefined)),
    'delivery_address_required',
  )
  assert.equal(
    code(() => requireCompleteAddress(null)),
    'delivery_address_required',
  )
  for (const part of ['name', 'line1', 'city', 'postal_code', 'country'] as const) {
    assert.equal(
      code(() => requireCompleteAddress({ ...full, [part]: undefined })),
      'delivery_address_required',
      part,
    )
    assert.equal(
      code(() => requireCompleteAddress({ ...full, [part]: '  ' })),
      'delivery_address_required',
      part,
    )
  }
  assert.equal(
    code(() => requireEmbossedName('  ')),
    'embossed_name_required',
  )
  assert.equal(
    code(() => requireEmbossedName(null)),
    'embossed_name_required',
  )
  assert.equal(requireEmbossedName(' ADA LOVELACE '), 'ADA LOVELACE')
})

test('spending controls: merge per key, refuse contradictions and what the processor cannot enforce', () => {
  const merged = mergeSpendingControls(emptySpendingControls(), {
    spending_limits: [{ amount: 500, interval: 'daily' }],
    blocked_mccs: ['5933'],
    allowed_countries: ['fra'],
  })
  assert.deepEqual(merged.allowed_countries, ['FRA'])
  const again = mergeSpendingControls(merged, { blocked_mccs: [] })
  assert.deepEqual(again.spending_limits, [{ amount: 500, interval: 'daily' }])
  assert.deepEqual(again.blocked_mccs, [])
  assert.equal(
    code(() =>
      mergeSpendingControls(merged, {
        spending_limits: [
          { amount: 1, interval: 'daily' },
          { amount: 2, interval: 'daily' },
        ],
      }),
    ),
    'invalid_parameter',
  )
  assert.equal(
    code(() => mergeSpendingControls(merged, { allowed_mccs: ['5411'] })),
    'invalid_parameter',
  )
  const basic = {
    intervals: ['per_authorization', 'daily', 'monthly'] as const,
    lists: ['blocked_mccs'] as const,
  }
  assert.equal(
    code(() => assertSpendControlsSupported(merged, basic)),
    'spend_control_unsupported',
  )
  assert.equal(
    code(() =>
      assertSpendControlsSupported(
        mergeSpendingControls(emptySpendingControls(), {
          spending_limits: [{ amount: 1, interval: 'weekly' }],
        }),
        basic,
      ),
    ),
    'spend_control_unsupported',
  )
  assert.equal(
    code(() =>
      assertSpendControlsSupported(
        mergeSpendingControls(again, { allowed_countries: [], blocked_mccs: ['7995'] }),
        basic,
      ),
    ),
    'ok',
  )
})

test('a PIN encrypted to the minted key decrypts; anything else is refused', async () => {
  const pair = await createPinKeyPair()
  assert.equal(createPublicKey(pair.publicPem).asymmetricKeyDetails?.modulusLength, 2048)
  const encrypt = (pin: string) =>
    publicEncrypt(
      { key: pair.publicPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      Buffer.from(pin),
    ).toString('base64')
  assert.equal(decryptPin(pair.privatePem, encrypt('1234')), '1234')
  const other = await createPinKeyPair()
  assert.equal(decryptPin(other.privatePem, encrypt('1234')), null)
  assert.equal(decryptPin(pair.privatePem, 'not base64 !!'), null)
  assert.ok(isValidPin('0000') && isValidPin('123456789012'))
  assert.ok(
    !isValidPin('123') && !isValidPin('1234567890123') && !isValidPin('12a4') && !isValidPin(null),
  )
})

test("card details are a JWE only the caller's private key opens; weak or private keys are refused", async () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwk = publicKey.export({ format: 'jwk' })
  const secrets = { number: '4242424242424242', cvc: '123', exp_month: 12, exp_year: 2030 }
  const jwe = await encryptDetails(importCallerKey(jwk), secrets)
  assert.equal(jwe.split('.').length, 5)
  const { plaintext, protectedHeader } = await compactDecrypt(jwe, privateKey)
  assert.equal(protectedHeader.alg, 'RSA-OAEP-256')
  assert.equal(protectedHeader.enc, 'A256GCM')
  assert.deepEqual(JSON.parse(new TextDecoder().decode(plaintext)), secrets)
  const pemJwe = await encryptDetails(
    importCallerKey(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    secrets,
  )
  assert.deepEqual(
    JSON.parse(new TextDecoder().decode((await compactDecrypt(pemJwe, privateKey)).plaintext)),
    secrets,
  )
  assert.ok(await importJWK({ ...jwk, alg: 'RSA-OAEP-256' }))

  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 })
  assert.equal(
    code(() => importCallerKey(weak.publicKey.export({ format: 'jwk' }))),
    'invalid_public_key',
  )
  assert.equal(
    code(() => importCallerKey(privateKey.export({ format: 'jwk' }))),
    'invalid_public_key',
  )
  assert.equal(
    code(() => importCallerKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())),
    'invalid_public_key',
  )
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  assert.equal(
    code(() => importCallerKey(ec.publicKey.export({ format: 'jwk' }))),
    'invalid_public_key',
  )
  assert.equal(
    code(() => importCallerKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----')),
    'invalid_public_key',
  )
  assert.equal(
    code(() => importCallerKey({ kty: 'RSA', n: 'abc' })),
    'invalid_public_key',
  )
})
