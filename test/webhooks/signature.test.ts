import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import Stripe from 'stripe'
import {
  computeSignature,
  constructWebhookEvent,
  parseSignatureHeader,
  signatureHeader,
  verifyWebhook,
  WebhookVerificationError,
} from '../../src/lib/webhook-signature.js'

describe('webhook signature helper', () => {
  const body = JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'card.created',
    data: { object: { id: 'card_1' } },
  })
  const secret = 'whsec_test_secret'
  const now = 1_800_000_000

  test('the signature is hex HMAC-SHA256 of "<t>.<body>" under the secret', () => {
    const header = signatureHeader(body, [secret], now)
    assert.equal(header, `t=${now},v1=${computeSignature(secret, now, body)}`)
    assert.equal(computeSignature(secret, now, body).length, 64)
    assert.deepEqual(parseSignatureHeader(header), {
      timestamp: now,
      signatures: [computeSignature(secret, now, body)],
    })
  })

  test('verifyWebhook accepts the right secret within the tolerance and nothing else', () => {
    const header = signatureHeader(body, [secret], now)
    assert.equal(verifyWebhook(body, header, secret, 300, now + 299), true)
    assert.equal(verifyWebhook(Buffer.from(body), header, [secret], 300, now), true)
    assert.equal(verifyWebhook(body, header, 'whsec_other', 300, now), false)
    assert.equal(verifyWebhook(`${body} `, header, secret, 300, now), false)
    assert.equal(verifyWebhook(body, header, secret, 300, now + 301), false, 'too old')
    assert.equal(
      verifyWebhook(body, header, secret, 300, now - 301),
      false,
      'too far in the future',
    )
    assert.equal(
      verifyWebhook(body, `t=${now + 1},${header.split(',')[1]}`, secret, 300, now),
      false,
      'timestamp is signed',
    )
    for (const bad of [
      undefined,
      '',
      'garbage',
      `t=${now}`,
      `v1=${'0'.repeat(64)}`,
      `t=abc,v1=${'0'.repeat(64)}`,
    ]) {
      assert.equal(verifyWebhook(body, bad, secret, 300, now), false, String(bad))
    }
  })

  test('during a rotation either secret verifies a header carrying two v1 values', () => {
    const header = signatureHeader(body, ['whsec_new', 'whsec_old'], now)
    assert.equal(header.split(',').length, 3)
    assert.equal(verifyWebhook(body, header, 'whsec_new', 300, now), true)
    assert.equal(verifyWebhook(body, header, 'whsec_old', 300, now), true)
    assert.equal(verifyWebhook(body, header, ['whsec_x', 'whsec_old'], 300, now), true)
  })

  test('constructWebhookEvent parses a verified body and throws on a bad signature', () => {
    const t = Math.floor(Date.now() / 1000)
    const header = signatureHeader(body, [secret], t)
    assert.equal(constructWebhookEvent<{ id: string }>(body, header, secret).id, 'evt_1')
    assert.throws(
      () => constructWebhookEvent(body, header, 'whsec_other'),
      WebhookVerificationError,
    )
  })

  test("stripe's verifier accepts our header, and ours accepts stripe's test header", () => {
    const stripe = new Stripe('sk_test_placeholder')
    const t = Math.floor(Date.now() / 1000)
    const ours = signatureHeader(body, [secret], t)
    assert.equal(
      (stripe.webhooks.constructEvent(body, ours, secret) as unknown as { id: string }).id,
      'evt_1',
    )
    const theirs = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: t })
    assert.equal(verifyWebhook(body, theirs, secret), true)
  })
})
