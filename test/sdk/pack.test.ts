import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { sdkTenant, startListeningApp, type SdkTenant } from './support.js'
import { databaseIndependent } from '../helpers/suites.js'

// The package as another project gets it: `npm pack` of sdk/ (its prepack builds dist/), installed into an empty
// project, and the README's quick start saved as quickstart.mjs and run with node against the running service,
// configured only through the environment variables the README names.
const run = promisify(execFile)
const sdkDir = fileURLToPath(new URL('../../sdk/', import.meta.url))

let t: TestApp
let baseUrl: string
let tenant: SdkTenant

before(async () => {
  ;({ t, baseUrl } = await startListeningApp())
  tenant = await sdkTenant(t, baseUrl)
})
after(() => t.close())

/** The first ```js block of the README's "Quick start" section, unchanged. */
function quickstart(): string {
  const readme = readFileSync(join(sdkDir, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Quick start'))
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(code, 'the README has a js quick start')
  return code
}

test('npm pack of sdk/ installs into an empty project and the README quick start runs against the service unchanged', {
  timeout: 180_000,
  skip: databaseIndependent,
}, async () => {
  const packed = mkdtempSync(join(tmpdir(), 'svc-sdk-pack-'))
  await run('npm', ['pack', '--pack-destination', packed], { cwd: sdkDir })
  const [tarball] = readdirSync(packed).filter((f) => f.endsWith('.tgz'))
  assert.ok(tarball, 'npm pack wrote a tarball')

  const project = mkdtempSync(join(tmpdir(), 'svc-sdk-app-'))
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'my-app', version: '1.0.0', private: true }),
  )
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(packed, tarball)],
    { cwd: project },
  )
  const installed = JSON.parse(
    readFileSync(join(project, 'node_modules/@svc/sdk/package.json'), 'utf8'),
  )
  assert.equal(installed.name, '@svc/sdk')
  assert.ok(
    readdirSync(join(project, 'node_modules/@svc/sdk/dist')).includes('index.d.ts'),
    'the types ship with it',
  )
  assert.ok(
    readdirSync(join(project, 'node_modules')).includes('jose'),
    'its one dependency is installed',
  )

  // The client file the service writes for the demo (`.data/sandbox-client.json`), here for the test's tenant.
  const clientFile = join(project, 'sandbox-client.json')
  writeFileSync(
    clientFile,
    JSON.stringify({
      client_id: tenant.clientId,
      organization_id: tenant.organizationId,
      private_jwk: tenant.privateJwk,
    }),
  )
  writeFileSync(join(project, 'quickstart.mjs'), quickstart())
  const { DATABASE_URL: _d, BASE_URL: _b, ...env } = process.env
  const { stdout } = await run(process.execPath, ['quickstart.mjs'], {
    cwd: project,
    env: { ...env, SVC_CLIENT_FILE: clientFile, SVC_BASE_URL: baseUrl },
  })
  assert.match(stdout.trim(), /^true req_\S+$/)
  const [auth] = (await tenant.svc().authorizations.list({ limit: 1 }).firstPage()).data
  assert.equal(auth.approved, true)
  assert.equal(auth.amount, 2_500)
})
