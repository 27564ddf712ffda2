// `npm run bench [-- NAME [options]]`: runs one benchmark (bench/NAME.ts) or, without a name, every one in turn.
// A benchmark is any bench/*.ts file but this one and the *-harness.ts helpers; each runs in its own process.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('.', import.meta.url))
const all = readdirSync(dir)
  .filter(
    (f) =>
      f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('-harness.ts') && !f.endsWith('.d.ts'),
  )
  .map((f) => f.slice(0, -3))
  .sort()

const [name, ...options] = process.argv.slice(2)
if (name === '--help' || name === 'help') {
  process.stdout.write(`benchmarks: ${all.join(', ')}\nusage: npm run bench -- NAME [options]\n`)
  process.exit(0)
}
if (name && !existsSync(join(dir, `${name}.ts`))) {
  process.stderr.write(`no benchmark "${name}"; there are: ${all.join(', ')}\n`)
  process.exit(2)
}

let failed = false
for (const bench of name ? [name] : all) {
  process.stdout.write(`\n== bench/${bench}.ts\n`)
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(dir, `${bench}.ts`), ...(name ? options : [])],
    { stdio: 'inherit' },
  )
  if (r.status !== 0) failed = true
}
process.exit(failed ? 1 : 0)
