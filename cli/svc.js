#!/usr/bin/env node
// `npx svc` in this checkout: npm links this package's bin into node_modules/.bin, where npx finds it at once.
// (A `bin` on the root package itself makes npx load the whole dependency tree first: about 1.4 CPU-seconds.)
import '../bin/svc.js'
