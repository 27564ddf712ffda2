import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { databaseIndependent } from '../helpers/suites.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const depcruise = fileURLToPath(
  new URL('../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url),
)

const { LAYERS, MIGRATIONS } = createRequire(import.meta.url)('../../scripts/layers.cjs') as {
  LAYERS: { name: string; path: string }[]
  MIGRATIONS: string
}

interface Graph {
  source: string
  dependencies: { resolved: string }[]
}

/** The rank of a file's layer (0: platform … root last), or -1 for a file in no layer. */
function layerOf(path: string): number {
  return LAYERS.findIndex((l) => new RegExp(l.path).test(path))
}

/**
 * Every path of imports that ends in a higher layer than it started from, as `a -> b -> c` (the shortest per start
 * and end): a direct upward import, or one through files the direct rules do not see. Migrations may reach src/db only.
 */
function upwardPaths(graph: Graph[]): string[] {
  const edges = new Map(graph.map((m) => [m.source, m.dependencies.map((d) => d.resolved)]))
  const found: string[] = []
  for (const start of edges.keys()) {
    const rank = layerOf(start)
    const isMigration = new RegExp(MIGRATIONS).test(start)
    const via = new Map<string, string>([[start, '']])
    const queue = [start]
    while (queue.length) {
      const file = queue.shift()!
      for (const next of edges.get(file) ?? []) {
        if (via.has(next)) continue
        via.set(next, file)
        const wrong = layerOf(next) > rank || (isMigration && !next.startsWith('src/db/'))
        if (wrong) {
          const path = [next]
          for (let at = file; at; at = via.get(at)!) path.unshift(at)
          found.push(path.join(' -> '))
        } else queue.push(next)
      }
    }
  }
  return found.sort()
}

function cruise(...args: string[]) {
  return spawnSync(
    process.execPath,
    [depcruise, 'src', '--config', '.dependency-cruiser.cjs', ...args],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  )
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
function moduleCycles(
  graph: { source: string; dependencies: { resolved: string }[] }[],
): string[][] {
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
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = []
      let w: string
      do {
        w = stack.pop()!
        group.push(w)
      } while (w !== v)
      if (group.length > 1) groups.push(group.sort())
    }
  }
  for (const v of edges.keys()) if (!index.has(v)) visit(v)
  return groups.sort()
}

test('imports keep the layers of docs/architecture.md, with no file import cycle and other modules only through their index.ts (npm run depcheck)', {
  skip: databaseIndependent,
}, () => {
  const run = cruise('--output-type', 'err')
  assert.equal(run.status, 0, `dependency rule violations:\n${run.stdout}${run.stderr}`)
})

let graphRead: Graph[] | undefined
/** The import graph of src as dependency-cruiser reads it (once per file: a read takes seconds). */
function importGraph(): Graph[] {
  if (!graphRead) {
    const run = cruise('--output-type', 'json')
    assert.equal(run.error, undefined)
    graphRead = JSON.parse(run.stdout).modules as Graph[]
  }
  return graphRead
}

test('no import cycle between modules: every dependency between two modules runs one way', {
  skip: databaseIndependent,
}, () => {
  assert.deepEqual(moduleCycles(importGraph()), [])
})

test('every file of src is in one layer, and no path of imports leads from a layer into a higher one', {
  skip: databaseIndependent,
}, () => {
  const graph = importGraph().filter((m) => m.source.startsWith('src/'))
  assert.ok(graph.length > 300, 'the graph holds the whole of src')
  assert.deepEqual(
    graph.filter((m) => layerOf(m.source) < 0).map((m) => m.source),
    [],
  )
  assert.deepEqual(upwardPaths(graph), [])
})

test('the path check finds an upward path through a root file, and a migration reaching product code', () => {
  const graph: Graph[] = [
    { source: 'src/db/tx.ts', dependencies: [{ resolved: 'src/app.ts' }] },
    { source: 'src/app.ts', dependencies: [{ resolved: 'src/modules/cards/index.ts' }] },
    { source: 'src/modules/cards/index.ts', dependencies: [{ resolved: 'src/db/tx.ts' }] },
    { source: 'src/db/migrations/0099_x.ts', dependencies: [{ resolved: 'src/lib/ids.ts' }] },
  ]
  assert.deepEqual(upwardPaths(graph), [
    'src/db/migrations/0099_x.ts -> src/lib/ids.ts',
    'src/db/tx.ts -> src/app.ts',
    'src/modules/cards/index.ts -> src/db/tx.ts -> src/app.ts',
  ])
})

test('the cycle check finds a cycle through three modules', () => {
  const graph = [
    { source: 'src/modules/a/x.ts', dependencies: [{ resolved: 'src/modules/b/index.ts' }] },
    { source: 'src/modules/b/y.ts', dependencies: [{ resolved: 'src/modules/c/index.ts' }] },
    {
      source: 'src/modules/c/z.ts',
      dependencies: [{ resolved: 'src/modules/a/index.ts' }, { resolved: 'src/db/tx.ts' }],
    },
    { source: 'src/modules/index.ts', dependencies: [{ resolved: 'src/modules/a/module.ts' }] },
  ]
  assert.deepEqual(moduleCycles(graph), [['a', 'b', 'c']])
})
