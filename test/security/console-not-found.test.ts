import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { MODULES, type ServiceModule } from '../../src/modules/index.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { csrfOf, person, type Person } from '../console/support.js'

/**
 * A console page about an object that does not exist is a 404 page and nothing else: no error in the log. (Such
 * pages used to log an error after the answer was sent, so anyone signed in could flood the error log.)
 */

const routes: { method: string; url: string }[] = []
const recorder: ServiceModule = {
  name: 'console-route-recorder',
  routes: (app) => {
    app.addHook('onRoute', (r) => {
      if (!r.url.startsWith('/console/') || !r.url.includes('/:id')) return
      for (const method of [r.method].flat())
        if (method !== 'HEAD') routes.push({ method, url: r.url })
    })
  },
}

/** What the service logged at error level or worse (level 50+). */
const errors: string[] = []
let t: TestApp
let owner: Person
let operator: Person

before(async () => {
  t = await startTestApp({
    env: { LOG_LEVEL: 'warn' },
    modules: [recorder, ...MODULES],
    logDestination: {
      write: (line: string) => {
        if (JSON.parse(line).level >= 50) errors.push(line)
      },
    },
  })
  owner = await person(t, 'owner')
  operator = await person(t, 'operator')
})
after(() => t.close())

test('every console page of an unknown id answers 4xx and logs nothing at error level', async () => {
  assert.ok(routes.length > 30, `${routes.length} console routes with an id`)
  const csrfOwner = csrfOf((await owner.agent.get('/console/team')).body)
  const csrfOperator = csrfOf((await operator.agent.get('/console/operator/organizations')).body)
  const notFound: string[] = []
  for (const route of routes) {
    const who = route.url.startsWith('/console/operator/')
      ? { agent: operator.agent, csrf: csrfOperator }
      : { agent: owner.agent, csrf: csrfOwner }
    const url = route.url.replace(':id', 'xyz_0000000000000000000000000')
    const res =
      route.method === 'GET'
        ? await who.agent.get(url)
        : await who.agent.post(url, { _csrf: who.csrf })
    await new Promise((resolve) => setImmediate(resolve))
    assert.ok(res.statusCode < 500, `${route.method} ${url}: ${res.statusCode}`)
    if (res.statusCode === 404) notFound.push(`${route.method} ${route.url}`)
  }
  assert.ok(notFound.length > 20, `${notFound.length} not-found pages`)
  assert.deepEqual(
    errors.map((l) => JSON.parse(l).msg),
    [],
    errors.join('\n').slice(0, 2000),
  )
})

test('an unknown console address is a 404 page that logs nothing at error level', async () => {
  errors.length = 0
  const res = await owner.agent.get('/console/no/such/page')
  assert.equal(res.statusCode, 404)
  assert.match(res.body, /Page not found/)
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(errors, [])
})
