import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { RouteOptions } from 'fastify'
import { validatorCompiler } from '../../src/http/validation.js'
import { MODULES, type ServiceModule } from '../../src/modules/index.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { databaseIndependent } from '../helpers/suites.js'

// Route schemas compile on their route's first request, not when the server starts (src/http/validation.ts,
// src/http/serialization.ts): a schema that cannot compile no longer stops the start. This compiles every one.
const routes: RouteOptions[] = []
const recorder: ServiceModule = {
  name: 'route-recorder',
  routes: (app) => {
    app.addHook('onRoute', (r) => {
      routes.push(r)
    })
  },
}
let t: TestApp

before(async () => {
  t = await startTestApp({ modules: [recorder, ...MODULES] })
})
after(async () => {
  await t?.close()
})

const label = (r: RouteOptions) => `${[r.method].flat().join(',')} ${r.url}`

test("every route's request schemas compile", { skip: databaseIndependent }, () => {
  let compiled = 0
  for (const route of routes) {
    for (const httpPart of ['body', 'querystring', 'params', 'headers'] as const) {
      const schema = route.schema?.[httpPart] as object | undefined
      if (!schema) continue
      assert.doesNotThrow(
        () => validatorCompiler({ schema, httpPart })({}),
        `${label(route)} ${httpPart}`,
      )
      compiled++
    }
  }
  assert.ok(compiled > 100, `only ${compiled} request schemas seen`)
})

test("every route's response schemas compile", { skip: databaseIndependent }, () => {
  const compile = SerializerSelector()()
  let compiled = 0
  for (const route of routes) {
    for (const [httpStatus, schema] of Object.entries(
      (route.schema?.response ?? {}) as Record<string, unknown>,
    )) {
      for (const method of [route.method].flat()) {
        const where = `${method} ${route.url} ${httpStatus}`
        assert.doesNotThrow(() => compile({ schema, method, url: route.url, httpStatus }), where)
        compiled++
      }
    }
  }
  assert.ok(compiled > 100, `only ${compiled} response schemas seen`)
})
