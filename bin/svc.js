#!/usr/bin/env node
// Entry point of the `svc` command: loads the TypeScript sources through tsx, no build step needed.
import { register } from 'tsx/esm/api'
register()
const { main } = await import('../src/cli.ts')
await main(process.argv.slice(2))
