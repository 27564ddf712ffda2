import assert from 'node:assert/strict'
import { test } from 'node:test'
import { UploadSlots } from '../../src/modules/kyc/upload-slots.js'

const settled = async (p: Promise<boolean>): Promise<boolean | 'waiting'> =>
  Promise.race([p, new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')))])

test('an owner holds at most its share; others pass it in the queue; its next waiter gets its own freed slot', async () => {
  const slots = new UploadSlots(4, 10_000, 2)
  const a = [slots.claim('a'), slots.claim('a'), slots.claim('a'), slots.claim('a')]
  assert.deepEqual(await Promise.all(a.map((s) => settled(s.granted))), [
    true,
    true,
    'waiting',
    'waiting',
  ])
  const b = [slots.claim('b'), slots.claim('b'), slots.claim('b')]
  assert.deepEqual(await Promise.all(b.map((s) => settled(s.granted))), [true, true, 'waiting'])
  assert.equal(slots.inUse, 4)
  // b frees one: a is still at its share, so b's own waiter takes it, not a's earlier ones.
  b[0].release()
  assert.equal(await settled(b[2].granted), true)
  assert.equal(await settled(a[2].granted), 'waiting')
  a[0].release()
  assert.equal(await settled(a[2].granted), true)
  assert.equal(await settled(a[3].granted), 'waiting')
  assert.deepEqual([slots.heldBy('a'), slots.heldBy('b'), slots.inUse, slots.waiting], [2, 2, 4, 1])
  for (const s of [...a, ...b]) s.release()
  assert.deepEqual([slots.inUse, slots.waiting, slots.heldBy('a')], [0, 0, 0])
})

test('a waiter whose owner is under its share takes a free slot at once even behind a capped owner', async () => {
  const slots = new UploadSlots(4, 10_000, 2)
  const a = [slots.claim('a'), slots.claim('a'), slots.claim('a')]
  assert.equal(await settled(a[2].granted), 'waiting')
  const c = slots.claim('c')
  assert.equal(await settled(c.granted), true)
  assert.equal(slots.inUse, 3)
  for (const s of [...a, c]) s.release()
})

test('a waiter gives up after the wait', async () => {
  const slots = new UploadSlots(1, 50, 1)
  const first = slots.claim('a')
  assert.equal(await first.granted, true)
  const alive = setTimeout(() => {}, 1000) // the slots' own timer does not keep the process up
  assert.equal(await slots.claim('b').granted, false)
  clearTimeout(alive)
  first.release()
  assert.equal(slots.inUse, 0)
})
