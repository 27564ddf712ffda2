#!/usr/bin/env node
// `npm run build` (also `prepare`, so `npm install` and `npm ci` run it): the JavaScript in dist/ that `svc serve`,
// `svc worker`, `svc migrate` and the CLI run (bin/svc.js), made by esbuild from src/ without type checking
// (`npm run typecheck` checks the types; the tests run the TypeScript sources through tsx).
//
// The CLI and what it reaches are bundled, the packages included: loading some 1,100 modules one by one (kysely
// and typebox alone are 600 files) cost more than a second of every start, one file and its few chunks a third of
// that. Each command's code is a chunk of its own loaded when the command runs (`svc token` loads none of the
// server). Left as imports: packages that find files of their own beside them (PGlite's WebAssembly and data,
// argon2's native binary) and those only some configurations load (ioredis, pg-native).
//
// What the sources locate through import.meta.url keeps working: every migration is an entry of its own in
// dist/db/migrations/ (the migrator lists and imports that folder), the other files of src/ are copied to the same
// place under dist/ (common-passwords.txt), and in each source import.meta.url is replaced by the URL its own file
// would have under dist/, so `new URL('./common-passwords.txt', import.meta.url)` and `../../../docs/guides/` lead
// where they do from src/.
//
// dist/.build.json records the size and time of every input (the sources, tsconfig.json, this file, the installed
// packages' lock); `staleness()` compares them with the files now (bin/svc.js asks before each command, a few
// milliseconds). Outputs are written through a temporary name and renamed into place, only when their content
// changed, so concurrent builds (test files starting `svc` at once) never leave half a file; chunks that are no
// longer part of the build are removed a minute later, after any process that started from them has loaded them.
//
//   npm run build [-- --out DIR]    DIR directly inside the repository (default dist)
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
const MANIFEST = '.build.json'
/** Source folders: src/ and the SDK's sources, which the CLI imports as @svc/sdk (tsconfig.json's paths). */
const SOURCE_DIRS = ['src', 'sdk/src']
/** Other inputs: compiler options, this file, and npm's record of what is installed in node_modules. */
const OTHER_INPUTS = ['tsconfig.json', 'scripts/build.mjs', 'node_modules/.package-lock.json']
const MIGRATIONS = 'src/db/migrations'
/** The embedded cluster with every migration applied that a new data folder starts from (src/db/client.ts). */
const CLUSTER = 'db/migrated-cluster.tar.gz'
/** Packages loaded from node_modules at run time (see above). */
const EXTERNAL = ['@electric-sql/pglite', '@node-rs/argon2', 'ioredis', 'pg-native']
/** The oldest Node the package accepts (package.json "engines"): what the output must run on. */
const TARGET = 'node20.12'
/** How long a file that no longer belongs to the build stays, for processes that started from the build before. */
const REMOVAL_GRACE_MS = 60_000
/** Held (a folder in outDir) by the build under way; older than LOCK_STALE_MS, it was left by one that died. */
const LOCK = '.building'
const LOCK_STALE_MS = 120_000
/** The bundled CommonJS packages call require() for Node's own modules. */
const REQUIRE_SHIM = [
  "import { createRequire as __svcCreateRequire } from 'node:module'",
  'const require = __svcCreateRequire(import.meta.url)',
].join('\n')

/** Every input as path (from the repository root) → "size:mtime"; a missing one is left out. */
function inputs() {
  const state = {}
  const note = (path) => {
    const s = statSync(join(ROOT, path), { throwIfNoEntry: false })
    if (s?.isFile()) state[path] = `${s.size}:${s.mtimeMs}`
  }
  for (const dir of SOURCE_DIRS) {
    for (const name of readdirSync(join(ROOT, dir), { recursive: true }))
      note(join(dir, String(name)))
  }
  for (const path of OTHER_INPUTS) note(path)
  return state
}

function readManifest(outDir) {
  try {
    return JSON.parse(readFileSync(join(outDir, MANIFEST), 'utf8'))
  } catch {
    return null
  }
}

/** Why `outDir` does not match the inputs (a short phrase), or null when it does. */
export function staleness(outDir = join(ROOT, 'dist')) {
  const before = readManifest(outDir)?.inputs
  if (!before) return `no build in ${basename(outDir)}/ yet`
  const now = inputs()
  const changed = [
    ...Object.keys(now).filter((path) => before[path] !== now[path]),
    ...Object.keys(before).filter((path) => !(path in now)),
  ]
  if (changed.length === 0) return null
  return changed.length === 1
    ? `${changed[0]} changed`
    : `${changed.length} files changed since the last build`
}

/** Writes `data` under `path` through a temporary name, unless the file already holds exactly that. */
function writeIfChanged(path, data) {
  const bytes = Buffer.from(data)
  if (existsSync(path) && readFileSync(path).equals(bytes)) return false
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  writeFileSync(temporary, bytes)
  renameSync(temporary, path)
  return true
}

/**
 * In each source of src/ that reads import.meta.url, the URL its own file would have under `outDir`, computed from
 * the URL of the output the code lands in (an entry or a chunk, somewhere under `outDir`).
 */
function sourceUrls(outDir) {
  const marker = `/${basename(outDir)}/`
  return {
    name: 'svc-source-urls',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = relative(ROOT, args.path)
        if (!source.startsWith('src/')) return undefined
        const text = readFileSync(args.path, 'utf8')
        if (!text.includes('import.meta.url')) return undefined
        const own = JSON.stringify(`${relative('src', source).slice(0, -3)}.js`)
        const at = `import.meta.url.lastIndexOf(${JSON.stringify(marker)}) + ${marker.length}`
        const url = `new URL(${own}, import.meta.url.slice(0, ${at})).href`
        return { contents: text.replaceAll('import.meta.url', url), loader: 'ts' }
      })
    },
  }
}

/** What the migrated cluster is made of: PGlite's version and the migration files. */
function clusterKey(migrations) {
  const hash = createHash('sha256')
  const pglite = JSON.parse(
    readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'),
  )
  hash.update(pglite.version)
  for (const name of migrations)
    hash.update(name).update(readFileSync(join(ROOT, MIGRATIONS, name)))
  return hash.digest('hex').slice(0, 16)
}

/** Runs the built migrations on an empty embedded cluster and writes its dump (a child process: PGlite is big). */
function writeCluster(outDir) {
  const script =
    'const m = await import(process.argv[1]); await m.writeMigratedCluster(process.argv[2])'
  const module = pathToFileURL(join(outDir, 'db/migrated-cluster.js')).href
  const args = ['--input-type=module', '-e', script, module, join(outDir, CLUSTER)]
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let errors = ''
    child.stderr.on('data', (chunk) => {
      errors += chunk
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code === 0) resolveRun()
      else reject(new Error(`migrated cluster not made: ${errors.trim()}`))
    })
  })
}

/**
 * Builds `outDir` from the sources: bundles the CLI and the migrations, copies the other files of src/, removes what
 * no longer belongs, then records the inputs as they were before the work began (a source edited meanwhile makes the
 * next check build again). The migrated cluster is removed when the migrations changed and, with `makeCluster`,
 * made again (seconds of PGlite; without it a first start initialises and migrates a cluster, as from the sources).
 */
export async function build(outDir = join(ROOT, 'dist'), { makeCluster = true } = {}) {
  const started = performance.now()
  const now = inputs()
  const migrations = readdirSync(join(ROOT, MIGRATIONS))
    .filter((name) => /^\d{4}_.+\.ts$/.test(name))
    .sort()
  const migrationEntries = migrations.map((name) => ({
    in: join(ROOT, MIGRATIONS, name),
    out: `db/migrations/${name.slice(0, -3)}`,
  }))
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    entryPoints: [
      { in: join(ROOT, 'src/cli.ts'), out: 'cli' },
      { in: join(ROOT, 'src/db/migrated-cluster.ts'), out: 'db/migrated-cluster' },
      ...migrationEntries,
    ],
    outdir: outDir,
    chunkNames: 'chunks/[name]-[hash]',
    write: false,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: TARGET,
    external: EXTERNAL,
    tsconfig: join(ROOT, 'tsconfig.json'),
    plugins: [sourceUrls(outDir)],
    banner: { js: REQUIRE_SHIM },
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'silent',
  })
  // A cluster made from other migrations goes before the new ones are written: dist/ never pairs the two.
  const manifest = readManifest(outDir)
  const cluster = clusterKey(migrations)
  if (manifest?.cluster !== cluster) rmSync(join(outDir, CLUSTER), { force: true })
  const expected = new Set([MANIFEST, LOCK, CLUSTER])
  let written = 0
  for (const file of result.outputFiles) {
    expected.add(relative(outDir, file.path))
    if (writeIfChanged(file.path, file.contents)) written++
  }
  for (const path of Object.keys(now).filter((p) => p.startsWith('src/') && !p.endsWith('.ts'))) {
    expected.add(relative('src', path))
    if (writeIfChanged(join(outDir, relative('src', path)), readFileSync(join(ROOT, path))))
      written++
  }
  let removed = 0
  for (const name of readdirSync(outDir, { recursive: true }).map(String)) {
    const stat = statSync(join(outDir, name), { throwIfNoEntry: false })
    if (!expected.has(name) && stat?.isFile() && Date.now() - stat.mtimeMs > REMOVAL_GRACE_MS) {
      rmSync(join(outDir, name), { force: true })
      removed++
    }
  }
  let clusterMade = existsSync(join(outDir, CLUSTER))
  if (!clusterMade && makeCluster) {
    try {
      await writeCluster(outDir)
      clusterMade = true
    } catch (err) {
      process.stderr.write(`svc build: ${err.message}\n`)
    }
  }
  const record = { target: TARGET, cluster: clusterMade ? cluster : null, inputs: now }
  writeIfChanged(join(outDir, MANIFEST), `${JSON.stringify(record, null, 1)}\n`)
  return {
    outputs: result.outputFiles.length,
    written,
    removed,
    ms: Math.round(performance.now() - started),
  }
}

/** Runs `work` holding `outDir`/.building, waiting while another process holds it; false: `skip()` said not to. */
async function whileLocked(outDir, skip, work) {
  const lock = join(outDir, LOCK)
  mkdirSync(outDir, { recursive: true })
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
      const held = statSync(lock, { throwIfNoEntry: false })
      if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS)
        rmSync(lock, { recursive: true, force: true })
      else await new Promise((resolveWait) => setTimeout(resolveWait, 100))
    }
  }
  try {
    if (skip()) return false
    await work()
    return true
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/**
 * Makes sure `outDir` is built from the inputs as they are: null when it already was, else why it was not and how
 * long the build took. Builds by concurrent callers (test files starting `svc` at once) wait for each other; a
 * caller that waited finds the build done and returns at once. The migrated cluster is kept when still valid but
 * not made here: a command started after an edit waits for the bundle only (`npm run build` makes the cluster).
 */
export async function ensureBuilt(outDir = join(ROOT, 'dist')) {
  const reason = staleness(outDir)
  if (reason === null) return null
  const started = performance.now()
  await whileLocked(
    outDir,
    () => staleness(outDir) === null,
    () => build(outDir, { makeCluster: false }),
  )
  return { reason, ms: Math.round(performance.now() - started) }
}

/** The first of esbuild's messages (file, line and text) or the error's own first line. */
export function firstLine(err) {
  const first = err.errors?.[0]
  if (first?.location) return `${first.location.file}:${first.location.line}: ${first.text}`
  return String(err.message).split('\n')[0]
}

/** `--out DIR`: directly inside the repository, where node_modules and docs/ are found as they are from src/. */
function outDirArgument(args) {
  const at = args.indexOf('--out')
  if (at === -1) return join(ROOT, 'dist')
  const dir = resolve(args[at + 1] ?? '')
  if (dirname(dir) !== resolve(ROOT))
    throw new Error(`--out must name a folder directly in ${ROOT}`)
  return dir
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const outDir = outDirArgument(process.argv.slice(2))
    let done
    await whileLocked(
      outDir,
      () => false,
      async () => {
        done = await build(outDir)
      },
    )
    const { outputs, written, removed, ms } = done
    process.stdout.write(
      `${basename(outDir)}/: ${outputs} outputs, ${written} written, ${removed} removed, ${ms} ms\n`,
    )
  } catch (err) {
    process.stderr.write(`build failed: ${firstLine(err)}\n`)
    process.exitCode = 1
  }
}
