import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  EVENT_CATALOGUE,
  EVENT_OBJECTS,
  EVENT_PREFIXES,
  EVENT_TYPES,
  EVENT_WILDCARDS,
  isEventType,
  isSubscriptionForm,
  subscribes,
  subscriptionRefusal,
  SUBSCRIPTION_FORMS,
} from '../../src/modules/events/catalog.js'

describe('event catalogue', () => {
  test('every type is <prefix>.<name>, says what emits it and names an object with a schema', () => {
    assert.ok(EVENT_TYPES.length >= 36)
    for (const type of EVENT_TYPES) {
      assert.match(type, /^[a-z_]+\.[a-z_]+$/, type)
      const spec = EVENT_CATALOGUE[type]
      assert.ok(
        spec.emittedBy.length > 20 && spec.emittedBy.endsWith('.'),
        `${type}: one sentence on what emits it`,
      )
      assert.ok(Object.hasOwn(EVENT_OBJECTS, spec.object), `${type}: ${spec.object}`)
    }
    for (const type of [
      'cardholder.created',
      'card.issued',
      'esim.depleted',
      'webhook_endpoint.disabled',
    ])
      assert.ok(isEventType(type), type)
    assert.equal(isEventType('card.*'), false)
  })

  test('the wildcards are * and one <prefix>.* per prefix that has types; the forms are the wildcards and the types', () => {
    assert.deepEqual(EVENT_PREFIXES, [
      'cardholder',
      'account',
      'card',
      'authorization_rule',
      'authorization',
      'transaction',
      'dispute',
      'sandbox_clock',
      'network_token',
      'authentication',
      'esim_order',
      'esim',
      'webhook_endpoint',
    ])
    assert.deepEqual(EVENT_WILDCARDS, ['*', ...EVENT_PREFIXES.map((p) => `${p}.*`)])
    assert.deepEqual(SUBSCRIPTION_FORMS, [...EVENT_WILDCARDS, ...EVENT_TYPES])
    for (const form of ['*', 'card.*', 'esim_order.*', 'card.created'])
      assert.ok(isSubscriptionForm(form), form)
    for (const form of ['cardz.*', 'card', 'card.', '*.*', 'card.**', '', ' card.*'])
      assert.equal(isSubscriptionForm(form), false, form)
  })

  test('subscribes: *, the exact type, or the prefix wildcard up to the dot', () => {
    assert.ok(subscribes(['*'], 'account.created'))
    assert.ok(subscribes(['card.*'], 'card.created'))
    assert.ok(subscribes(['account.debited', 'card.*'], 'card.pin_set'))
    assert.ok(subscribes(['account.created'], 'account.created'))
    assert.equal(subscribes(['card.*'], 'account.created'), false)
    assert.equal(
      subscribes(['card.*'], 'cardholder.created'),
      false,
      'card.* is not a string prefix of cardholder',
    )
    assert.equal(subscribes(['esim.*'], 'esim_order.created'), false)
    assert.equal(subscribes(['account.created'], 'account.credited'), false)
  })

  test('refusals name the value and the catalogue page; a bare prefix is pointed at its wildcard', () => {
    const base = 'https://api.example.com'
    for (const ok of SUBSCRIPTION_FORMS) assert.equal(subscriptionRefusal(ok, base), null, ok)
    const bare = subscriptionRefusal('card', base)!
    assert.match(bare, /"card" is not an event type: use "card\.\*"/)
    assert.ok(bare.endsWith(`${base}/docs/guides/event-catalogue`), bare)
    const unknown = subscriptionRefusal('cardz.*', base)!
    assert.match(unknown, /^Unknown event type "cardz\.\*"/)
    assert.ok(unknown.endsWith(`${base}/docs/guides/event-catalogue`), unknown)
    assert.match(
      subscriptionRefusal('$&{value}', base)!,
      /"\$&\{value\}"/,
      'the value is quoted as given',
    )
  })
})
