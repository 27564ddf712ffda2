/**
 * The layers of the service (docs/architecture.md, "Layers, checked"), lowest first. Every file of src sits in
 * exactly one: a file imports only its own layer and the ones below it, directly or through any path of imports.
 * The root (the composition root, the entry points, the module list, the first-run seed) may import anything;
 * nothing imports it. Migrations import only the database layer (src/db), so that a change to product code
 * never changes what an applied migration wrote. `npm run depcheck` runs these rules; `npm test` runs them too
 * (test/platform/layers.test.ts, which also follows every path of imports between layers and refuses any import
 * cycle between modules).
 */
const { LAYERS, MIGRATIONS } = require('./scripts/layers.cjs')
const slug = (name) => name.replace(' ', '-')

/** A direct import from a layer into any layer above it. */
const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `no-upward-from-${slug(layer.name)}`,
  comment: `The ${layer.name} layer imports only itself and the layers below it; what it must learn of a higher `
    + 'layer travels as an event, a job or a hook.',
  severity: 'error',
  from: { path: layer.path },
  to: { path: LAYERS.slice(i + 1).map((l) => l.path).join('|') },
}))

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'in-a-layer',
      comment: 'Every file of src belongs to a layer, so that no import passes through a file the rules do not see.',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((l) => l.path).join('|') },
      to: {},
    },
    {
      name: 'migrations-import-only-the-database-layer',
      comment: 'A migration is frozen once applied: it imports src/db only, never product code that may change.',
      severity: 'error',
      from: { path: MIGRATIONS },
      to: { path: '^src/', pathNot: '^src/db/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles between files that run (a cycle made only of `import type` lines vanishes at run time).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'other-modules-through-index',
      comment: "Another module is reached only through its index.ts (its published surface), never its internals.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'],
    },
  },
}
