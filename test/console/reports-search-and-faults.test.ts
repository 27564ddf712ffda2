import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { cardBody, makeCardholder, runJobs } from '../cards/support.js'
import {
  auditRows,
  expectNoSandboxTools,
  expectReadOnly,
  follow,
  main,
  type Person,
  withObjectPages,
} from './support.js'

/**
 * The console's reports, search and processor fault pages: a report requested, generated in the background and
 * downloaded, the list paging with its filter, a reused key refused in words; search stays in its organization and
 * environment; a fault armed in the sandbox makes the next processor call fail; a viewer only reads, and production
 * has no sandbox tools.
 */

let t: TestApp, token: string
let owner: Person, viewer: Person, prodOwner: Person
let cardholder: any, account: any
let other: { tenant: TestClient; token: string }

withObjectPages(async (fixture) => {
  ;({ t, token, owner, viewer, prodOwner, cardholder, account } = fixture)
  const otherTenant = await createTenant(t)
  other = { tenant: otherTenant, token: await otherTenant.token() }
})

const audits = (action: string) => auditRows(t, action)

describe('processor faults', () => {
  test('a fault armed in the sandbox makes the next processor call fail, as the simulator endpoint does', async () => {
    const res = await owner.agent.submit('/console/sandbox/processor-faults', {
      operation: 'issue_card',
      error: 'processor_unavailable',
      count: '1',
    })
    const page = await follow(owner.agent, res)
    assert.match(page.body, /The next 1 issue_card call will answer processor_unavailable/)
    assert.match(main(page.body), /<code>issue_card<\/code>/)
    const created = await t.api(token, 'POST', '/v1/cards', cardBody(cardholder.id, account.id))
    const issued = await t.api(token, 'POST', `/v1/simulate/cards/${created.json().id}/issue`)
    assert.equal(issued.statusCode, 502, issued.body)
    assert.equal((await audits('processor_fault.set')).length, 1)
    // A bad count is refused in words, and nothing is armed.
    const bad = await owner.agent.submit('/console/sandbox/processor-faults', {
      operation: 'set_pin',
      error: 'processor_unavailable',
      count: 'lots',
    })
    assert.equal(bad.statusCode, 400)
    assert.match(bad.body, /docs\/errors#invalid_parameter/)
    assert.doesNotMatch(
      main((await owner.agent.get('/console/sandbox/processor-faults')).body),
      /<code>set_pin<\/code>/,
    )
  })
})

describe('search', () => {
  test("an unknown id, or another organization's, is not found", async () => {
    const foreign = await makeCardholder(t, other.token)
    for (const q of [
      foreign.id,
      'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
      'esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
      'nobody@example.com',
    ]) {
      const res = await owner.agent.get(`/console/search?q=${encodeURIComponent(q)}`)
      assert.equal(res.statusCode, 404, q)
      assert.match(res.body, /Not found/)
    }
    // The sandbox's own cardholder is not found from production.
    const fromProduction = await prodOwner.agent.get(`/console/search?q=${cardholder.id}`)
    assert.equal(fromProduction.statusCode, 404)
  })
})

describe('reports', () => {
  test('requested, generated in the background, then downloaded', async () => {
    const res = await owner.agent.submit('/console/reports', {
      type: 'esim_orders',
      from: '2026-01-01',
      to: '2027-01-01',
    })
    const pending = await follow(owner.agent, res)
    const id = /Report (rpt_[0-9A-Z]+)/.exec(pending.body)![1]
    assert.match(main(pending.body), /pending/)
    await runJobs(t)
    const done = await owner.agent.get(`/console/reports/${id}`)
    assert.match(main(done.body), /succeeded/)
    const file = await owner.agent.get(`/console/reports/${id}/download`)
    assert.equal(file.statusCode, 200)
    assert.match(String(file.headers['content-type']), /text\/csv/)
    assert.equal(
      Number(file.headers['content-length']),
      Buffer.byteLength(file.body),
      'the streamed file carries its length',
    )
    const api = await t.api(token, 'GET', `/v1/reports/${id}/download`)
    assert.equal(file.body, api.body)
    assert.equal((await audits('report.requested')).filter((a) => a.object_id === id).length, 1)
  })
})

describe('reports list and keys', () => {
  test('the list pages 25 at a time with its filter kept, and a key sent with another form is refused in words', async () => {
    const ids: string[] = []
    for (let i = 0; i < 26; i++) {
      const res = await t.api(token, 'POST', '/v1/reports', {
        type: 'ledger',
        from: '2026-01-01',
        to: '2026-02-01',
      })
      assert.equal(res.statusCode, 201, res.body)
      ids.push(res.json().id)
    }
    const first = main((await owner.agent.get('/console/reports?type=ledger')).body)
    assert.ok(first.includes(ids[25]) && first.includes(ids[1]) && !first.includes(ids[0]))
    const next = /href="(\/console\/reports\?[^"]*after=[^"]+)"/.exec(first)
    assert.ok(next, 'a next-page link')
    assert.match(next[1], /type=ledger/)
    const second = main((await owner.agent.get(next[1].replace(/&amp;/g, '&'))).body)
    assert.ok(second.includes(ids[0]) && !second.includes(ids[25]))

    const once = await owner.agent.submit('/console/reports', {
      type: 'ledger',
      from: '2026-03-01',
      to: '2026-04-01',
      idempotency_key: 'console_reuse_1',
    })
    assert.equal(once.statusCode, 303)
    const reused = await owner.agent.submit('/console/reports', {
      type: 'transactions',
      from: '2026-03-01',
      to: '2026-04-01',
      idempotency_key: 'console_reuse_1',
    })
    assert.equal(reused.statusCode, 409, reused.body.slice(0, 300))
    assert.match(reused.body, /already used with a different request body/)
    assert.match(reused.body, /docs\/errors#idempotency_key_reuse/)
  })
})

describe('roles and environments', () => {
  test('a viewer reads every page, sees no forms that change things, and is refused 403 on every POST', async () => {
    await expectReadOnly(
      viewer,
      ['/console/reports', '/console/search', '/console/sandbox/processor-faults'],
      [['/console/reports', { type: 'ledger', from: '2026-01-01', to: '2026-02-01' }]],
    )
  })

  test('production shows no sandbox tools and refuses their POSTs', async () => {
    await expectNoSandboxTools(
      prodOwner,
      [],
      [
        [
          '/console/sandbox/processor-faults',
          { operation: 'issue_card', error: 'processor_unavailable', count: '1' },
        ],
      ],
    )
  })
})
