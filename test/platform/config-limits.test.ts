import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.js'

const secrets = { SVC_MASTER_KEY: randomBytes(32).toString('base64'), SVC_OPERATOR_TOKEN: 'op_x' }
const postgres = {
  ...secrets,
  DATABASE_URL: 'postgres://x@127.0.0.1/x',
  BASE_URL: 'https://api.example.com',
}

test('with DATABASE_URL, BASE_URL is required: the token audience is never taken from the Host header in production', () => {
  const { BASE_URL: _unset, ...withoutBaseUrl } = postgres
  assert.throws(
    () => loadConfig(withoutBaseUrl),
    (err: Error) =>
      err instanceof ConfigError &&
      /BASE_URL is required when DATABASE_URL is set/.test(err.message),
  )
  assert.throws(() => loadConfig({ ...withoutBaseUrl, BASE_URL: '' }), ConfigError)
  const config = loadConfig(postgres)
  assert.equal(config.baseUrl, 'https://api.example.com')
  assert.equal(config.baseUrlExplicit, true)
})

test('the embedded demo still starts without BASE_URL (the guessed address)', () => {
  const config = loadConfig({ ...secrets, PORT: '8301' })
  assert.equal(config.baseUrl, 'http://localhost:8301')
  assert.equal(config.baseUrlExplicit, false)
})

test('BASE_URL must be an absolute http(s) URL', () => {
  for (const bad of [
    'api.example.com',
    'ftp://api.example.com',
    'https://api.example.com/?x=1',
    'https://',
  ]) {
    assert.throws(() => loadConfig({ ...postgres, BASE_URL: bad }), ConfigError, bad)
  }
  assert.equal(
    loadConfig({ ...postgres, BASE_URL: 'https://example.com/svc/' }).baseUrl,
    'https://example.com/svc',
  )
})

test('svc refuses to start on PostgreSQL without BASE_URL, with a message naming it', () => {
  const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))
  const { BASE_URL: _unset, ...env } = postgres
  const run = spawnSync(process.execPath, [bin, 'migrate'], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  })
  assert.notEqual(run.status, 0)
  assert.match(run.stderr, /BASE_URL is required when DATABASE_URL is set/)
})

test('request time limits: 30 s for the request and 10 s for its headers by default, configurable, headers within the request', () => {
  const config = loadConfig(postgres)
  assert.equal(config.requestTimeoutMs, 30_000)
  assert.equal(config.headersTimeoutMs, 10_000)
  const short = loadConfig({ ...postgres, REQUEST_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '500' })
  assert.equal(short.requestTimeoutMs, 2000)
  assert.equal(short.headersTimeoutMs, 500)
  for (const bad of [
    { REQUEST_TIMEOUT_MS: '0' },
    { HEADERS_TIMEOUT_MS: '1.5' },
    { REQUEST_TIMEOUT_MS: 'soon' },
    { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' },
  ]) {
    assert.throws(() => loadConfig({ ...postgres, ...bad }), ConfigError, JSON.stringify(bad))
  }
})
