import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { after, before, test } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { freshDatabaseUrl } from '../helpers/db.js'
import { databaseIndependent } from '../helpers/suites.js'
import { freePort } from '../sdk/support.js'

// What `npm install` builds (scripts/build.mjs) and bin/svc.js runs: the CLI as JavaScript, run here without tsx.
// The build goes to a folder of its own beside dist/ (dist/ belongs to the other tests' `svc` processes).
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const out = join(ROOT, `.build-test-${randomBytes(4).toString('hex')}`)
const postgres = process.env.DATABASE_URL
const embeddedOnly = postgres ? 'the embedded first run: runs in the embedded-PGlite suite' : false
const postgresOnly = postgres ? false : 'needs DATABASE_URL: runs in the PostgreSQL suite'

interface Run {
  status: number | null
  stdout: string
  stderr: string
}

/** `node FILE ARGS…` (FILE under the repository) to its exit. */
function node(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      stdout += c
    })
    child.stderr.on('data', (c) => {
      stderr += c
    })
    child.on('exit', (status) => resolve({ status, stdout, stderr }))
  })
}

/** The built CLI's `main`, as bin/svc.js calls it, with these arguments. */
function builtCli(args: string[]): string[] {
  const runner = 'const { main } = await import(process.argv[1]); await main(process.argv.slice(2))'
  return ['--input-type=module', '-e', runner, pathToFileURL(join(out, 'cli.js')).href, ...args]
}

function svc(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return node(builtCli(args), env)
}

/** A long-running command of the built CLI, resolved when its output matches `ready`. */
async function svcUntil(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, builtCli(args), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${ready} within 100 s: ${output}`)),
      100_000,
    )
    const onData = (chunk: Buffer) => {
      output += chunk
      if (ready.test(output)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited ${code}: ${output}`))
    })
  })
  return child
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** The environment PostgreSQL deployments need. */
function postgresEnv(url: string, port: number): Record<string, string> {
  return {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_OPERATOR_TOKEN: `op_build_${randomBytes(12).toString('hex')}`,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-build-')),
    LOG_LEVEL: 'info',
  }
}

before(async () => {
  const built = await node(['scripts/build.mjs', '--out', out])
  assert.equal(built.status, 0, built.stderr)
})

after(() => rmSync(out, { recursive: true, force: true }))

test('the build holds no TypeScript and its CLI runs on plain node', {
  timeout: 60_000,
  skip: databaseIndependent,
}, async () => {
  const files = readdirSync(out, { recursive: true }).map(String)
  assert.deepEqual(
    files.filter((f) => f.endsWith('.ts')),
    [],
  )
  // Files of src/ read at run time are copied beside their module.
  assert.ok(existsSync(join(out, 'modules/users/common-passwords.txt')))
  const help = await svc(['help'])
  assert.equal(help.status, 0, help.stderr)
  assert.match(help.stdout, /^svc: card issuing and eSIM service/)
})

test('svc migrate from the build finds a PostgreSQL database migrated from the sources up to date', {
  timeout: 60_000,
  skip: postgresOnly,
}, async () => {
  const database = await freshDatabaseUrl()
  try {
    const run = await svc(['migrate'], postgresEnv(database.url!, await freePort()))
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stdout.trim(), 'schema is up to date')
  } finally {
    await database.drop()
  }
})

test("from the build on an empty embedded database: the data folder starts as the migrated cluster the build made, npm start prints the banner, svc token gets a token, the README's first call answers, and the pages that read files serve them", {
  timeout: 120_000,
  skip: embeddedOnly,
}, async () => {
  assert.ok(
    existsSync(join(out, 'db/migrated-cluster.tar.gz')),
    'the build made the migrated cluster',
  )
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-build-'))
  const port = await freePort()
  const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent' }
  const migrated = await svc(['migrate'], env)
  assert.equal(migrated.status, 0, migrated.stderr)
  assert.equal(migrated.stdout.trim(), 'schema is up to date')
  const child = await svcUntil(['serve'], env, /First call/)
  try {
    const token = await svc(['token'], env)
    assert.equal(token.status, 0, token.stderr)
    assert.match(token.stdout.trim(), /^at_\w+$/)
    const headers = { authorization: `Bearer ${token.stdout.trim()}` }
    const programs = await fetch(`http://127.0.0.1:${port}/v1/programs`, { headers })
    assert.equal(programs.status, 200)
    const body = (await programs.json()) as { data: { processor: string }[] }
    assert.deepEqual(body.data.map((p) => p.processor).sort(), ['sim_basic', 'sim_full'])
    // docs/guides/*.md, found from the module's own location; the reference, rendered from the built routes.
    const guide = await fetch(`http://127.0.0.1:${port}/docs/guides/first-card`)
    assert.equal(guide.status, 200)
    assert.match(await guide.text(), /<h1/)
    const reference = await fetch(`http://127.0.0.1:${port}/docs`)
    assert.equal(reference.status, 200)
    assert.match(
      await reference.text(),
      /<section class="op" id="tag\/Cards\/paths\/~1v1~1cards\/post">/,
    )
  } finally {
    await stop(child)
  }
  // The cluster holds every migration of src/db/migrations, applied by the built migrator from dist/db/migrations/.
  const files = readdirSync(join(ROOT, 'src/db/migrations')).filter((f) => /^\d{4}_.+\.ts$/.test(f))
  const sources = files.map((f) => f.slice(0, -3)).sort()
  const db = new PGlite(join(dataDir, 'pgdata'))
  try {
    const applied = await db.query<{ name: string }>(
      'SELECT name FROM kysely_migration ORDER BY name',
    )
    assert.deepEqual(
      applied.rows.map((r) => r.name),
      sources,
    )
  } finally {
    await db.close()
  }
})

test('svc serve and svc worker from the build run on PostgreSQL', {
  timeout: 90_000,
  skip: postgresOnly,
}, async () => {
  const database = await freshDatabaseUrl()
  const port = await freePort()
  const env = postgresEnv(database.url!, port)
  const server = await svcUntil(['serve'], env, /svc is listening on/)
  try {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
    assert.equal(ready.status, 200)
    const worker = await svcUntil(['worker'], env, /"msg":"worker started"/)
    await stop(worker)
  } finally {
    await stop(server)
    await database.drop()
  }
})

test('a build that no longer matches a source is found stale, names the file, and is built again', {
  timeout: 90_000,
  skip: databaseIndependent,
}, async () => {
  // The manifest is altered, not the source: the check compares the two.
  const script = `
    import { readFileSync, writeFileSync } from 'node:fs'
    const { ensureBuilt, staleness } = await import(process.argv[1])
    const out = process.argv[2]
    const manifest = JSON.parse(readFileSync(out + '/.build.json', 'utf8'))
    const before = staleness(out)
    manifest.inputs['src/cli.ts'] = '0:0'
    writeFileSync(out + '/.build.json', JSON.stringify(manifest))
    const stale = staleness(out)
    const built = await ensureBuilt(out)
    console.log(JSON.stringify({ before, stale, rebuilt: built?.reason, after: staleness(out) }))`
  const buildScript = pathToFileURL(join(ROOT, 'scripts/build.mjs')).href
  const run = await node(['--input-type=module', '-e', script, buildScript, out])
  assert.equal(run.status, 0, run.stderr)
  const seen = JSON.parse(run.stdout)
  assert.deepEqual(seen, {
    before: null,
    stale: 'src/cli.ts changed',
    rebuilt: 'src/cli.ts changed',
    after: null,
  })
})
