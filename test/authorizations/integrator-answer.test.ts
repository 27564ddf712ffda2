import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readAnswer } from '../../src/modules/authorizations/integrator.js'

const ok = (body: string, statusCode = 200) =>
  readAnswer({ statusCode, error: null, responseBody: body, bodyIncomplete: null }, 1000)
const unanswered = (error: string) =>
  readAnswer({ statusCode: null, error, responseBody: null, bodyIncomplete: 'no answer' }, 1000)

test('2xx answers approve, partially approve or decline; an amount equal to the one asked is a plain approval', () => {
  assert.deepEqual(ok('{"approved":true}'), { kind: 'approved', amount: null })
  assert.deepEqual(ok('{"approved":true}', 204), { kind: 'approved', amount: null })
  assert.deepEqual(ok('{"approved":true,"amount":1}'), { kind: 'approved', amount: 1 })
  assert.deepEqual(ok('{"approved":true,"amount":1000}'), { kind: 'approved', amount: null })
  assert.deepEqual(ok('{"approved":false}'), { kind: 'declined' })
  assert.deepEqual(ok('{"approved":false,"amount":5}'), { kind: 'declined' })
})

test('anything else stands in: timeout, error or invalid_response', () => {
  const reason = (r: ReturnType<typeof readAnswer>) => (r.kind === 'stand_in' ? r.reason : r.kind)
  assert.equal(reason(unanswered('ETIMEDOUT: no response within 0.3 s')), 'timeout')
  assert.equal(reason(unanswered('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9')), 'error')
  assert.equal(reason(ok('{"approved":true}', 302)), 'error')
  assert.equal(reason(ok('{"approved":true}', 500)), 'error')
  for (const body of [
    '',
    'yes',
    '[true]',
    'null',
    '{}',
    '{"approved":"true"}',
    '{"approved":1}',
    '{"approved":true,"amount":0}',
    '{"approved":true,"amount":-5}',
    '{"approved":true,"amount":10.5}',
    '{"approved":true,"amount":"500"}',
    '{"approved":true,"amount":1001}',
  ]) {
    assert.equal(reason(ok(body)), 'invalid_response', body)
  }
})

test('an explicit decline is read whatever its size up to 64 KiB and whatever the status', () => {
  const padded = JSON.stringify({ approved: false, reason: 'x'.repeat(60 * 1024) })
  assert.deepEqual(ok(padded), { kind: 'declined' })
  assert.deepEqual(ok('{"approved":false}', 402), { kind: 'declined' })
  assert.deepEqual(ok('{"approved":false}', 503), { kind: 'declined' })
})

test('a body that did not arrive whole is never an approval: it stands in as unreadable, whatever it starts with', () => {
  for (const start of ['{"approved":true', '{"approved":false', '']) {
    for (const statusCode of [200, 500]) {
      const answer = readAnswer(
        {
          statusCode,
          error: null,
          responseBody: start,
          bodyIncomplete: "the answer's body is over 64 KiB",
        },
        1000,
      )
      assert.equal(answer.kind, 'stand_in')
      assert.equal(answer.kind === 'stand_in' && answer.unreadable, true)
      assert.equal(answer.kind === 'stand_in' && answer.reason, 'invalid_response')
    }
  }
})
