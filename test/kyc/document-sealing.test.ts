import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { openWithDataKey, sha256Hex } from '../../src/lib/crypto.js'
import { base64DecodedSize, documentAad, sealDocument } from '../../src/modules/kyc/documents.js'

// Documents are decoded and encrypted in 192 KiB steps; whatever the step boundaries cut through (a base64
// quantum, a line break, the padding), the stored ciphertext opens to exactly the file sent.
const masterKey = randomBytes(32)

const cases: [string, Buffer, (b64: string) => string][] = [
  ['one step, padded', randomBytes(1000), (s) => s],
  ['many steps, padded with ==', randomBytes(3 * 256 * 1024 + 1), (s) => s],
  ['many steps, padded with =', randomBytes(3 * 256 * 1024 + 2), (s) => s],
  ['many steps, unpadded', randomBytes(2 * 1024 * 1024 + 2), (s) => s.replace(/=+$/, '')],
  [
    'wrapped at 76 with CRLF across step boundaries',
    randomBytes(700_001),
    (s) => `${s.replace(/(.{76})/g, '$1\r\n')}\r\n`,
  ],
  ['wrapped at 64 with LF', randomBytes(1_000_000), (s) => s.replace(/(.{64})/g, '$1\n')],
]

for (const [name, file, encode] of cases) {
  test(`sealing ${name} stores what opens to the same bytes, with their size and SHA-256`, () => {
    const content = encode(file.toString('base64'))
    assert.equal(base64DecodedSize(content), file.length)
    const sealed = sealDocument(masterKey, 'kycdoc_test', content)
    assert.equal(sealed.sizeBytes, file.length)
    assert.equal(sealed.sha256, sha256Hex(file))
    assert.equal(sealed.ciphertext.length, file.length + 28)
    assert.deepEqual(
      openWithDataKey(masterKey, sealed.wrappedKey, sealed.ciphertext, documentAad('kycdoc_test')),
      file,
    )
    assert.throws(() =>
      openWithDataKey(masterKey, sealed.wrappedKey, sealed.ciphertext, documentAad('kycdoc_other')),
    )
  })
}

test('the size check reads the text without decoding it and refuses what Buffer would quietly accept', () => {
  assert.equal(base64DecodedSize('QUJD\r\nREVG\n'), 6)
  for (const bad of ['QUJD REVG', 'QQ==QQ==', 'QUJDRA=', 'Q', 'QUJD-_', 'QQ=\n=x', 'QQ==='])
    assert.equal(base64DecodedSize(bad), null, bad)
  assert.equal(base64DecodedSize('QQ=\n='), 1)
})
