import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { databaseIndependent } from '../helpers/suites.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const depcruise = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url))

function cruise(...args: string[]) {
  return spawnSync(process.execPath, [depcruise, 'src', '--config', '.dependency-cruiser.cjs', ...args], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
}

/** The folders of src that form a module: one of src/modules, or a platform folder (jobs, http, esim-network, …) or the migrations. */
function moduleOf(path: string): string | null {
  const inModules = /^src\/modules\/([^/]+)\//.exec(path)
  if (inModules) return inModules[1]
  if (path.startsWith('src/modules/')) return null // the module list (src/modules/index.ts, module.ts) joins them all
  if (path.startsWith('src/db/migrations/')) return 'migrations' // loaded by path at start-up, not imported by db
  return /^src\/([^/]+)\//.exec(path)?.[1] ?? null
}

/** Every import cycle between modules, as the modules of each strongly connected group (Tarjan), sorted. */
function moduleCycles(graph: { source: string; dependencies: { resolved: string }[] }[]): string[][] {
  const edges = new Map<string, Set<string>>()
  for (const m of graph) {
    const from = moduleOf(m.source)
    if (!from) continue
    if (!edges.has(from)) edges.set(from, new Set())
    for (const d of m.dependencies) {
      const to = moduleOf(d.resolved)
      if (to && to !== from) edges.get(from)!.add(to)
    }
  }
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const groups: string[][] = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)) } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = []
      let w: string
      do { w = stack.pop()!; group.push(w) } while (w !== v)
      if (group.length > 1) groups.push(group.sort())
    }
  }
  for (const v of edges.keys()) if (!index.has(v)) visit(v)
  return groups.sort()
}

test('imports keep the layers of design.md, with no file import cycle and other modules only through their index.ts (npm run depcheck)', { skip: databaseIndependent }, () => {
  const run = cruise('--output-type', 'err')
  assert.equal(run.status, 0, `dependency rule violations:\n${run.stdout}${run.stderr}`)
})

test('no import cycle between modules: every dependency between two modules runs one way', { skip: databaseIndependent }, () => {
  const run = cruise('--output-type', 'json')
  assert.equal(run.error, undefined)
  assert.deepEqual(moduleCycles(JSON.parse(run.stdout).modules), [])
})

test('the cycle check finds a cycle through three modules', () => {
  const graph = [
    { source: 'src/modules/a/x.ts', dependencies: [{ resolved: 'src/modules/b/index.ts' }] },
    { source: 'src/modules/b/y.ts', dependencies: [{ resolved: 'src/modules/c/index.ts' }] },
    { source: 'src/modules/c/z.ts', dependencies: [{ resolved: 'src/modules/a/index.ts' }, { resolved: 'src/db/tx.ts' }] },
    { source: 'src/modules/index.ts', dependencies: [{ resolved: 'src/modules/a/module.ts' }] },
  ]
  assert.deepEqual(moduleCycles(graph), [['a', 'b', 'c']])
})
