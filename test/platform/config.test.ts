import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.js'

const base = {
  SVC_MASTER_KEY: randomBytes(32).toString('base64'),
  SVC_OPERATOR_TOKEN: 'op_x',
  DATABASE_URL: 'postgres://x@127.0.0.1/x',
  BASE_URL: 'https://api.example.com',
}

test('the demo start-up lets sandbox webhooks reach local receivers over plain http and keeps production public', () => {
  const config = loadConfig({ ...base, SVC_SEED_DEMO: 'true' })
  assert.deepEqual(config.webhookUrlPolicy, { sandbox: 'allow_local_http', production: 'public' })
})

test('without the demo, webhook URLs must be public in every environment', () => {
  assert.deepEqual(loadConfig(base).webhookUrlPolicy, { sandbox: 'public', production: 'public' })
})

test('an explicit WEBHOOK_URL_POLICY applies to every environment', () => {
  assert.deepEqual(
    loadConfig({ ...base, SVC_SEED_DEMO: 'true', WEBHOOK_URL_POLICY: 'public' }).webhookUrlPolicy,
    { sandbox: 'public', production: 'public' },
  )
  assert.deepEqual(loadConfig({ ...base, WEBHOOK_URL_POLICY: 'allow_private' }).webhookUrlPolicy, {
    sandbox: 'allow_private',
    production: 'allow_private',
  })
  assert.deepEqual(
    loadConfig({ ...base, WEBHOOK_URL_POLICY: 'allow_local_http' }).webhookUrlPolicy,
    { sandbox: 'allow_local_http', production: 'allow_local_http' },
  )
  assert.throws(() => loadConfig({ ...base, WEBHOOK_URL_POLICY: 'anything' }), ConfigError)
})

test('PostgreSQL deployments must be given the master key and operator token', () => {
  assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x' }), ConfigError)
  assert.throws(() => loadConfig({ ...base, SVC_MASTER_KEY: 'short' }), ConfigError)
})

test('an unknown environment name is refused at start-up', () => {
  assert.throws(() => loadConfig({ ...base, SVC_ENVIRONMENTS: 'sandbox,staging' }), ConfigError)
})

test('BASE_URL left unset (embedded database only) is recorded as a guess; set, it is the one public address', () => {
  const { DATABASE_URL: _postgres, BASE_URL: _set, ...embedded } = base
  const guessed = loadConfig({ ...embedded, PORT: '8201' })
  assert.equal(guessed.baseUrl, 'http://localhost:8201')
  assert.equal(guessed.baseUrlExplicit, false)
  const set = loadConfig({ ...base, BASE_URL: 'https://api.example.com/' })
  assert.equal(set.baseUrl, 'https://api.example.com')
  assert.equal(set.baseUrlExplicit, true)
})

test('DATABASE_CONNECTIONS: 20 by default, a positive integer up to 1000', () => {
  assert.equal(loadConfig(base).databaseConnections, 20)
  assert.equal(loadConfig({ ...base, DATABASE_CONNECTIONS: '6' }).databaseConnections, 6)
  for (const bad of ['0', '2.5', '1001', 'many'])
    assert.throws(() => loadConfig({ ...base, DATABASE_CONNECTIONS: bad }), ConfigError, bad)
})

test('HTTP_PROCESSES: 1 by default, up to 64 on PostgreSQL, and refused on the embedded database', () => {
  assert.equal(loadConfig(base).httpProcesses, 1)
  assert.equal(loadConfig({ ...base, HTTP_PROCESSES: '4' }).httpProcesses, 4)
  for (const bad of ['0', '1.5', '65', 'two'])
    assert.throws(() => loadConfig({ ...base, HTTP_PROCESSES: bad }), ConfigError, bad)
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'))
  try {
    assert.throws(() => loadConfig({ DATA_DIR: dir, HTTP_PROCESSES: '2' }), /needs DATABASE_URL/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
