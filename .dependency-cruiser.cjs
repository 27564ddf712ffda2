/**
 * The layers of shared/design.md ("Shape"), checked: lowest first, each may import only its own layer and
 * those below it; no import cycles; another module only through its index.ts. `npm run depcheck` runs it
 * (and `npm test` through test/platform/layers.test.ts, which also refuses any import cycle between modules).
 */
const LAYERS = [
  // platform
  '^src/(db|lib|http|jobs|processors|esim-network)/|^src/modules/(events|webhooks)/',
  // identity
  '^src/modules/(oauth|programs|cardholders|kyc|users)/',
  // money
  '^src/modules/(accounts|ledger)/',
  // cards
  '^src/modules/(cards|network-tokens|authentications)/',
  // card network
  '^src/modules/(authorizations|transactions|disputes)/',
  // products
  '^src/modules/(esim|h5|reports|console|operator|docs)/',
]
const NAMES = ['platform', 'identity', 'money', 'cards', 'card network', 'products']

const upward = LAYERS.slice(0, -1).map((from, i) => ({
  name: `no-upward-from-${NAMES[i].replace(' ', '-')}`,
  comment: `The ${NAMES[i]} layer imports only itself and the layers below it; what it must learn of a higher layer travels as an event or a job.`,
  severity: 'error',
  from: { path: from },
  to: { path: LAYERS.slice(i + 1).join('|') },
}))

module.exports = {
  forbidden: [
    ...upward,
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
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
}
