import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { openApiDocument } from '../../scripts/event-catalogue.js'
import { REGENERATE_SDK_TYPES, renderSdkTypes, SDK_TYPES_FILE } from '../../scripts/sdk-types.js'
import { databaseIndependent } from '../helpers/suites.js'

test("the SDK's committed types are what openapi-typescript makes of the served OpenAPI document", {
  skip: databaseIndependent,
}, async () => {
  const expected = await renderSdkTypes(await openApiDocument())
  const committed = readFileSync(SDK_TYPES_FILE, 'utf8')
  assert.ok(
    committed === expected,
    `sdk/src/generated/openapi.ts is stale: run \`${REGENERATE_SDK_TYPES}\` and commit the result`,
  )
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

test('the SDK builds to plain ESM with declarations that Node loads without a TypeScript loader', {
  skip: databaseIndependent,
}, () => {
  // Inside sdk/ so the output finds jose in the repository's node_modules, as an installed package finds its own.
  const out = mkdtempSync(fileURLToPath(new URL('../../sdk/.build-test-', import.meta.url)))
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    const project = fileURLToPath(new URL('../../sdk/tsconfig.build.json', import.meta.url))
    const build = spawnSync(process.execPath, [tsc, '-p', project, '--outDir', out], {
      encoding: 'utf8',
    })
    assert.equal(build.status, 0, build.stdout + build.stderr)
    assert.ok(
      existsSync(join(out, 'index.d.ts')) && existsSync(join(out, 'generated', 'openapi.d.ts')),
    )
    // A plain node process (no tsx): every relative import of the output resolves as ESM.
    const load = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(out, 'index.js'))}); console.log(typeof m.Svc, typeof m.Svc.webhooks.constructEvent, typeof m.SvcError)`,
      ],
      { encoding: 'utf8' },
    )
    assert.equal(load.stdout.trim(), 'function function function', load.stderr)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})
