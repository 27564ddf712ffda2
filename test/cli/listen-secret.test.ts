import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { listenSecret, listenSecretFile } from '../../src/cli/listen.js'

test('svc listen keeps one signing secret per organization and environment in the data folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-listen-secret-'))
  const file = listenSecretFile(dir, 'org_01ABC', 'sandbox')
  assert.equal(file, join(dir, 'listen-secret-org_01ABC-sandbox'))
  const first = listenSecret(file)
  assert.match(first, /^whsec_[A-Za-z0-9_-]{32}$/)
  assert.equal(listenSecret(file), first, 'a second session verifies with the same secret')
  assert.equal(readFileSync(file, 'utf8'), `${first}\n`)
  assert.equal(statSync(file).mode & 0o777, 0o600, 'readable by its owner only')
  const other = listenSecret(listenSecretFile(dir, 'org_01ABC', 'production'))
  assert.notEqual(other, first, 'another environment has its own')
  writeFileSync(file, 'not a secret\n')
  assert.notEqual(listenSecret(file), 'not a secret', 'a damaged file is replaced')
})
