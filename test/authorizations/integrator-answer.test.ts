import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readAnswer } from '../../src/modules/authorizations/integrator.js'

const ok = (body: string, statusCode = 200) => readAnswer({ statusCode, error: null, responseBody: body }, 1000)

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
  assert.equal(reason(readAnswer({ statusCode: null, error: 'ETIMEDOUT: no response within 0.3 s', responseBody: null }, 1000)), 'timeout')
  assert.equal(reason(readAnswer({ statusCode: null, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', responseBody: null }, 1000)), 'error')
  assert.equal(reason(ok('{"approved":true}', 302)), 'error')
  assert.equal(reason(ok('{"approved":true}', 500)), 'error')
  for (const body of ['', 'yes', '[true]', 'null', '{}', '{"approved":"true"}', '{"approved":1}', '{"approved":true,"amount":0}',
    '{"approved":true,"amount":-5}', '{"approved":true,"amount":10.5}', '{"approved":true,"amount":"500"}', '{"approved":true,"amount":1001}']) {
    assert.equal(reason(ok(body)), 'invalid_response', body)
  }
})
