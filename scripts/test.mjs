#!/usr/bin/env node
// `npm test`: Node 20's test runner does not expand glob patterns, so this finds the test files itself.
// Usage: npm test [-- [--test-name-pattern=…] [file or folder …]]  (default: every *.test.ts under test/)
// Three test files run at once (TEST_CONCURRENCY to change it): many tests wait on timers, sockets or a browser, so
// three keep two cores busy where two left them idle a third of the time.
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'))
const targets = process.argv.slice(2).filter((a) => !a.startsWith('--'))

/** Every `*.test.ts` at or below a path, sorted so runs are repeatable. */
function testFiles(path) {
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.test.ts') && !name.split('/').includes('node_modules'))
    .map((name) => join(path, name))
    .sort()
}

const files = (targets.length ? targets : [join(root, 'test')])
  .flatMap(testFiles)
  .map((f) => relative(process.cwd(), f) || f)
if (files.length === 0) {
  process.stderr.write('no test files found\n')
  process.exit(1)
}

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
    ...flags,
    ...files,
  ],
  { stdio: 'inherit' },
)
// Ctrl-C reaches the child through the process group; a SIGTERM sent to this process alone is passed on.
process.on('SIGINT', () => {})
process.on('SIGTERM', () => child.kill('SIGTERM'))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
