import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { openApiDocument } from '../../scripts/event-catalogue.js'
import { REGENERATE_SDK_TYPES, renderSdkTypes, SDK_TYPES_FILE } from '../../scripts/sdk-types.js'

test('the SDK\'s committed types are what openapi-typescript makes of the served OpenAPI document', async () => {
  const expected = await renderSdkTypes(await openApiDocument())
  const committed = readFileSync(SDK_TYPES_FILE, 'utf8')
  assert.ok(committed === expected, `sdk/src/generated/openapi.ts is stale: run \`${REGENERATE_SDK_TYPES}\` and commit the result`)
})

test('the SDK package is ESM with declarations and depends at run time on jose alone', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../sdk/package.json', import.meta.url), 'utf8'))
  assert.equal(pkg.name, '@svc/sdk')
  assert.equal(pkg.type, 'module')
  assert.equal(pkg.exports['.'].types, './dist/index.d.ts')
  assert.deepEqual(Object.keys(pkg.dependencies), ['jose'])
  const root = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  assert.ok(root.workspaces.includes('sdk'), 'the root install (npm ci) installs the SDK workspace')
})
