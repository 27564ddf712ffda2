import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, test } from 'node:test'
import { serverAddress } from '../../src/cli.js'
import { loadConfig } from '../../src/config.js'

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

/** The test's environment without DATABASE_URL: these commands call a server, the embedded default applies. */
function withoutDatabase(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...env } = process.env
  return env
}

/** A data folder with a client file whose token_url names `tokenUrl`. */
function dataDirWithClient(tokenUrl: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'))
  writeFileSync(
    join(dir, 'sandbox-client.json'),
    JSON.stringify({ client_id: 'oc_x', token_url: tokenUrl, kid: 'k1', private_jwk: {} }),
  )
  return dir
}

describe('the CLI finds the server: --base-url, then BASE_URL, then the client file, then PORT', () => {
  const dir = dataDirWithClient('http://127.0.0.1:8311/oauth/token')
  const env = (extra: Record<string, string>) =>
    loadConfig({ DATA_DIR: dir, PORT: '8399', ...extra })

  test('--base-url wins over everything, without a trailing slash', () => {
    assert.deepEqual(
      serverAddress({ 'base-url': 'http://10.0.0.5:9000/' }, env({ BASE_URL: 'http://b.example' })),
      { url: 'http://10.0.0.5:9000', source: '--base-url' },
    )
  })

  test('BASE_URL comes next', () => {
    assert.deepEqual(serverAddress({}, env({ BASE_URL: 'http://b.example' })), {
      url: 'http://b.example',
      source: 'BASE_URL',
    })
  })

  test("then the client file's token_url (the default file or --client-file)", () => {
    assert.deepEqual(serverAddress({}, env({})), {
      url: 'http://127.0.0.1:8311',
      source: `token_url in ${join(dir, 'sandbox-client.json')}`,
    })
    const other = join(
      dataDirWithClient('https://api.example.com/oauth/token'),
      'sandbox-client.json',
    )
    assert.deepEqual(serverAddress({ 'client-file': other }, env({})), {
      url: 'https://api.example.com',
      source: `token_url in ${other}`,
    })
  })

  test('then PORT on localhost', () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-cli-'))
    assert.deepEqual(serverAddress({}, loadConfig({ DATA_DIR: empty, PORT: '8399' })), {
      url: 'http://localhost:8399',
      source: 'PORT',
    })
  })
})

describe('a server that cannot be reached is named, with how to change it', () => {
  test('an operator command names the address and where it came from', () => {
    const run = spawnSync(
      process.execPath,
      [bin, 'org', 'list', '--base-url', 'http://127.0.0.1:47'],
      {
        encoding: 'utf8',
        env: { ...withoutDatabase(), SVC_OPERATOR_TOKEN: 'x', BASE_URL: '' },
      },
    )
    assert.equal(run.status, 1)
    assert.match(
      run.stderr,
      /cannot reach the service at http:\/\/127\.0\.0\.1:47 \(address from --base-url\): ECONNREFUSED/,
    )
    assert.match(run.stderr, /--base-url URL or BASE_URL/)
  })

  test("svc token follows the client file's token_url and names it when nothing answers", () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'))
    writeFileSync(
      join(dir, 'sandbox-client.json'),
      JSON.stringify({
        client_id: 'oc_x',
        token_url: 'http://127.0.0.1:47/oauth/token',
        kid: 'k1',
        private_jwk: {
          kty: 'EC',
          crv: 'P-256',
          x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
          y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
          d: 'jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI',
        },
      }),
    )
    const run = spawnSync(process.execPath, [bin, 'token'], {
      encoding: 'utf8',
      env: { ...withoutDatabase(), DATA_DIR: dir, BASE_URL: '' },
    })
    assert.equal(run.status, 1)
    assert.match(
      run.stderr,
      new RegExp(
        `cannot reach the service at http://127\\.0\\.0\\.1:47 \\(address from token_url in ${join(dir, 'sandbox-client.json').replaceAll('.', '\\.')}\\)`,
      ),
    )
  })
})
