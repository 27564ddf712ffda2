import { PGlite } from '@electric-sql/pglite'
let t0 = Date.now()
const p = new PGlite()
await p.waitReady
console.log('init', Date.now() - t0)
t0 = Date.now()
const d = await p.dumpDataDir('none')
console.log('dump', Date.now() - t0, d.size)
t0 = Date.now()
const q = new PGlite({ loadDataDir: d })
await q.waitReady
console.log('load', Date.now() - t0)
