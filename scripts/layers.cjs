/**
 * The layers of src, lowest first (docs/architecture.md, "Layers, checked"): each a name and a path pattern.
 * Read by the import rules (.dependency-cruiser.cjs) and by test/platform/layers.test.ts, which follows every
 * path of imports between them.
 */
const LAYERS = [
  {
    name: 'platform',
    path:
      '^src/(db|lib|http|jobs|processors|esim-network)/|^src/modules/(events|webhooks)/' +
      '|^src/(config|app-deps)\\.ts$|^src/modules/module\\.ts$',
  },
  { name: 'identity', path: '^src/modules/(oauth|programs|cardholders|kyc|users|clocks)/' },
  { name: 'money', path: '^src/modules/(accounts|ledger)/' },
  { name: 'cards', path: '^src/modules/(cards|network-tokens|authentications)/' },
  {
    name: 'card network',
    path: '^src/modules/(authorizations|authorization-rules|transactions|disputes)/',
  },
  { name: 'products', path: '^src/modules/(esim|h5|reports|console|operator|docs)/' },
  {
    name: 'root',
    path: '^src/(server|cli|app|runtime)\\.ts$|^src/(cli|seed)/|^src/modules/(index|retention)\\.ts$',
  },
]
const MIGRATIONS = '^src/db/migrations/'

module.exports = { LAYERS, MIGRATIONS }
