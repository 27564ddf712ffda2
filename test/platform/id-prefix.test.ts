import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { idPrefixRange } from '../../src/lib/id-prefix.js'
import { newId } from '../../src/lib/ids.js'

/** The id range a search prefix reads: every id starting so is inside it, and no other of its kind. */
describe('idPrefixRange', () => {
  test('the next character of the id alphabet bounds the range, carrying past Z; none past the last', () => {
    assert.deepEqual(idPrefixRange('card_01J8'), { from: 'card_01J8', to: 'card_01J9' })
    assert.deepEqual(idPrefixRange('card_01j9'), { from: 'card_01J9', to: 'card_01JA' })
    assert.deepEqual(idPrefixRange('card_01HZ'), { from: 'card_01HZ', to: 'card_01J' })
    assert.deepEqual(idPrefixRange('card_ZZ'), { from: 'card_ZZ', to: null })
    assert.deepEqual(idPrefixRange('card_'), { from: 'card_', to: null })
  })

  test('every id that starts with the prefix falls in the range, in byte order', () => {
    for (let i = 0; i < 200; i++) {
      const id = newId('card', new Date(1_700_000_000_000 + i * 7_919_333))
      for (const n of [6, 8, 10, 14]) {
        const { from, to } = idPrefixRange(id.slice(0, n))
        assert.ok(id >= from && (to === null || id < to), `${id} in [${from}, ${to})`)
      }
    }
  })
})
