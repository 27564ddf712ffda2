#!/usr/bin/env node
// Entry point of the `svc` command: runs the JavaScript build in dist/ (`npm install` and `npm ci` make it through
// `prepare`; `npm run build` remakes it; scripts/build.mjs says how). Before each command it checks that dist/ was
// built from the files as they are now (sizes and times against dist/.build.json, a few milliseconds) and, when one
// changed, builds again first, saying so on stderr: an edited source never runs as stale JavaScript. When dist/
// cannot be built (esbuild missing, a read-only folder), it runs the TypeScript sources through tsx and says so.
import { fileURLToPath } from 'node:url'
import { ensureBuilt, firstLine } from '../scripts/build.mjs'

/** The CLI module to run: dist/cli.js, up to date; src/cli.ts through tsx when no build can be made. */
async function entry() {
  try {
    const built = await ensureBuilt()
    if (built)
      process.stderr.write(
        `svc: built dist/ (${built.reason}) in ${(built.ms / 1000).toFixed(1)} s\n`,
      )
    return '../dist/cli.js'
  } catch (err) {
    process.stderr.write(
      `svc: cannot build dist/ (${firstLine(err)}); running src/ through tsx (slower start)\n`,
    )
    const { register } = await import('tsx/esm/api')
    // The project's compiler options wherever the command runs: their `paths` find the SDK's sources (@svc/sdk).
    register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) })
    return '../src/cli.ts'
  }
}

const { main } = await import(await entry())
await main(process.argv.slice(2))
