import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isId, newId, ulid } from '../../src/lib/ids.js'

test('ids have their prefix and a 26-character body, and are all distinct', () => {
  const ids = Array.from({ length: 5000 }, () => newId('auth'))
  for (const id of ids) assert.ok(isId('auth', id), id)
  assert.equal(new Set(ids).size, ids.length)
})

test('ids sort in creation order, also within one millisecond and across the random pool refilling', () => {
  const at = Date.now()
  const bodies = Array.from({ length: 1000 }, () => ulid(at))
  assert.deepEqual([...bodies].sort(), bodies)
  const later = ulid(at + 1)
  assert.ok(later > bodies[bodies.length - 1])
})

test('the random part varies between milliseconds', () => {
  const base = Date.now() + 10_000
  const randoms = new Set(Array.from({ length: 200 }, (_, i) => ulid(base + i).slice(10)))
  assert.ok(randoms.size > 195, `only ${randoms.size} distinct random parts`)
})
