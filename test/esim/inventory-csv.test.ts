import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  inBatches,
  InventoryCsvError,
  parseInventoryCsv,
} from '../../src/modules/esim/inventory-csv.js'

test('the stock file is read line by line, with or without its header, blank lines skipped', () => {
  const text =
    'iccid,smdp_address,matching_id\r\n8901000000000000001,smdp.example.com,MATCH-1\n\n 8901000000000000019 , smdp.example.com , MATCH-2 \n'
  assert.deepEqual(parseInventoryCsv(text), [
    { iccid: '8901000000000000001', smdp_address: 'smdp.example.com', matching_id: 'MATCH-1' },
    { iccid: '8901000000000000019', smdp_address: 'smdp.example.com', matching_id: 'MATCH-2' },
  ])
})

test('a malformed line is refused with its line number instead of being loaded half-read', () => {
  assert.throws(
    () => parseInventoryCsv('8901000000000000001,smdp.example.com\n'),
    (e: Error) => e instanceof InventoryCsvError && /line 1/.test(e.message),
  )
  assert.throws(() => parseInventoryCsv('a,b,c\n"x",y,z\n'), /line 2/)
})

test('large files go to the operator API in batches it accepts', () => {
  const batches = inBatches(Array.from({ length: 25_001 }, (_, i) => i))
  assert.deepEqual(
    batches.map((b) => b.length),
    [10_000, 10_000, 5_001],
  )
})
