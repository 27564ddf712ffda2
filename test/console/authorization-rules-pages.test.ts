import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { runJobs } from '../cards/support.js'
import type { TestApp } from '../helpers/app.js'
import {
  auditRows,
  expectReadOnly,
  follow,
  formFields,
  main,
  type Person,
  withObjectPages,
} from './support.js'

/**
 * The console's authorization rules pages: a rule of each type made with the form (as the API stores it), a form
 * sent twice makes one rule, a refusal names its field and keeps what was typed, a shadow rule's would-be declines
 * and an active rule's declines listed on its page, edit, disable, delete behind its own confirmation page, the
 * audit rows; the card page lists the rules that apply; a viewer only reads.
 */

const RULES = '/console/authorization-rules'

let t: TestApp, token: string
let owner: Person, viewer: Person
let card: any

withObjectPages(async (fixture) => {
  ;({ t, token, owner, viewer, card } = fixture)
})

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await t.api(token, method, path, body)
  assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.body}`)
  return res.json()
}

async function spend(amount: number, merchant = 'Corner Cafe'): Promise<any> {
  return api('POST', '/v1/simulate/authorizations', {
    card_id: card.id,
    amount,
    currency: 'USD',
    merchant: { name: merchant, mcc: '5814', country: 'USA' },
  })
}

/** Sends the new-rule form of `type` with `fields` (the form's own hidden fields added). */
async function create(type: string, fields: Record<string, string>) {
  const page = await owner.agent.get(`${RULES}/new?type=${type}`)
  assert.equal(page.statusCode, 200, page.body.slice(0, 500))
  const form = formFields(page.body, RULES)
  return owner.agent.post(RULES, { ...form, ...fields })
}

const ruleIdOf = (location: unknown) => /arl_[0-9A-Z]{26}/.exec(String(location))![0]

describe('authorization rules', () => {
  let velocityId: string

  test('the navigation lists the page for owners and viewers', async () => {
    for (const who of [owner, viewer]) {
      const home = await who.agent.get('/console')
      assert.match(
        home.body,
        /<a href="\/console\/authorization-rules"[^>]*>Authorization rules<\/a>/,
      )
    }
  })

  test('a velocity limit made with the form is the rule the API answers, and a form sent twice makes one', async () => {
    const page = await owner.agent.get(`${RULES}/new?type=velocity_limit&level=card&ids=${card.id}`)
    assert.match(page.body, new RegExp(`name="ids"[^>]*value="${card.id}"`))
    const form = {
      ...formFields(page.body, RULES),
      name: 'Two purchases a day',
      level: 'card',
      ids: card.id,
      mode: 'shadow',
      window_type: 'rolling',
      window_seconds: '86400',
      aggregate: 'card',
      limit_count: '2',
      limit_amount: '',
      include_mccs: '',
      exclude_mccs: '7995, 7994',
      include_countries: '',
      exclude_countries: 'prk',
      merchant_currencies: '',
    }
    const res = await owner.agent.post(RULES, form)
    const shown = await follow(owner.agent, res)
    velocityId = ruleIdOf(res.headers.location)
    assert.match(shown.body, /Rule created \(shadow\)/)
    const rule = await api('GET', `/v1/authorization_rules/${velocityId}`)
    assert.deepEqual(rule.scope, { level: 'card', ids: [card.id], exclude_ids: [] })
    assert.equal(rule.mode, 'shadow')
    assert.deepEqual(rule.parameters, {
      window: { type: 'rolling', seconds: 86400 },
      aggregate: 'card',
      limit_amount: null,
      limit_count: 2,
      filters: {
        include_mccs: [],
        exclude_mccs: ['7995', '7994'],
        include_countries: [],
        exclude_countries: ['PRK'],
        merchant_currencies: [],
      },
    })
    assert.match(main(shown.body), /At most 2 approved authorizations in any 24 hours, per card/)

    // The same form again (a double click): the stored answer, no second rule, one audit row.
    const again = await owner.agent.post(RULES, form)
    assert.equal(again.statusCode, 303)
    assert.equal(ruleIdOf(again.headers.location), velocityId)
    const listed = await api('GET', `/v1/authorization_rules?card_id=${card.id}`)
    assert.equal(listed.data.length, 1)
    assert.deepEqual(
      (await auditRows(t, 'authorization_rule.created')).map((r) => r.object_id),
      [velocityId],
    )
  })

  test('the list shows name, scope, type, mode and status, each rule linked', async () => {
    const list = main((await owner.agent.get(RULES)).body)
    assert.ok(list.includes(`href="${RULES}/${velocityId}">Two purchases a day</a>`))
    assert.ok(list.includes(`href="/console/cards/${card.id}"`), 'the scope links the card')
    assert.match(list, /Velocity limit/)
    assert.match(list, /badge[^"]*">shadow</)
    assert.match(list, /badge[^"]*">enabled</)
    // Filtered by a card the rule does not apply to: nothing.
    const other = main(
      (await owner.agent.get(`${RULES}?card_id=card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M`)).body,
    )
    assert.match(other, /No rule applies to this card/)
  })

  test("a shadow rule's would-be declines are listed on its page, and on the authorization", async () => {
    await spend(1200)
    await spend(1300)
    const third = await spend(1400)
    assert.equal(third.approved, true)
    assert.deepEqual(third.rule_results, [
      { rule_id: velocityId, mode: 'shadow', outcome: 'would_decline' },
    ])
    const page = main((await owner.agent.get(`${RULES}/${velocityId}`)).body)
    const decisions = page.slice(page.indexOf('id="decisions-h"'))
    assert.ok(decisions.includes(`/console/authorizations/${third.id}`), 'the third is listed')
    assert.match(decisions, />would decline</)
    assert.equal((decisions.match(/\/console\/authorizations\/auth_/g) ?? []).length, 1)
    assert.ok(
      decisions.includes(`href="/console/cards/${card.id}">Visa •••• ${card.last4}</a>`),
      'the card reads as brand and last4',
    )

    const authorization = main((await owner.agent.get(`/console/authorizations/${third.id}`)).body)
    assert.ok(authorization.includes(`href="${RULES}/${velocityId}"`), 'the rule is linked')
    assert.match(authorization, />would decline</)
  })

  test('edited to active, it declines: rule_declined, and the decline is on its page', async () => {
    const page = await owner.agent.get(`${RULES}/${velocityId}`)
    const form = formFields(page.body, `${RULES}/${velocityId}`)
    assert.equal(form.window_seconds, '86400', 'the edit form starts from the rule')
    const res = await owner.agent.post(`${RULES}/${velocityId}`, {
      ...form,
      name: 'Two purchases in 24 hours',
      mode: 'active',
      window_type: 'rolling',
      aggregate: 'card',
    })
    assert.match((await follow(owner.agent, res)).body, /Rule saved/)
    const rule = await api('GET', `/v1/authorization_rules/${velocityId}`)
    assert.equal(rule.mode, 'active')
    assert.equal(rule.name, 'Two purchases in 24 hours')
    assert.equal(rule.parameters.limit_count, 2)
    assert.deepEqual(rule.parameters.filters.exclude_mccs, ['7995', '7994'])
    assert.equal((await auditRows(t, 'authorization_rule.updated')).length, 1)

    const declined = await spend(1500)
    assert.equal(declined.approved, false)
    assert.equal(declined.decline_reason, 'rule_declined')
    assert.equal(declined.rule_id, velocityId)
    const after = main((await owner.agent.get(`${RULES}/${velocityId}`)).body)
    assert.ok(after.includes(`/console/authorizations/${declined.id}`))
    assert.match(after.slice(after.indexOf('id="decisions-h"')), />declined</)
    const authorization = main(
      (await owner.agent.get(`/console/authorizations/${declined.id}`)).body,
    )
    assert.match(authorization, /Declined by rule/)
  })

  test("a backtest asked on the rule page runs as a job; its results are the API's", async () => {
    const page = await owner.agent.get(`${RULES}/${velocityId}`)
    const form = formFields(page.body, `${RULES}/${velocityId}/backtests`)
    const res = await owner.agent.post(`${RULES}/${velocityId}/backtests`, form)
    const queued = main((await follow(owner.agent, res)).body)
    assert.match(queued, /Backtest queued/)
    assert.match(queued.slice(queued.indexOf('id="backtests-h"')), />pending</)
    assert.equal((await auditRows(t, 'authorization_rule.backtest_requested')).length, 1)

    await runJobs(t)
    const [backtest] = (await api('GET', `/v1/authorization_rules/${velocityId}/backtests`)).data
    assert.equal(backtest.status, 'completed')
    assert.ok(backtest.results.evaluated >= 4, JSON.stringify(backtest.results))
    const done = main((await owner.agent.get(`${RULES}/${velocityId}`)).body)
    const section = done.slice(done.indexOf('id="backtests-h"'))
    assert.match(section, />completed</)
    for (const n of [backtest.results.evaluated, backtest.results.would_decline])
      assert.match(
        section,
        new RegExp(`<td class="num"[^>]*>${n}</td>`),
        `${n} in ${section.slice(0, 3000)}`,
      )

    // A window that ends before it starts: refused, naming the field, the form as typed.
    const again = await owner.agent.get(`${RULES}/${velocityId}`)
    const refused = await owner.agent.post(`${RULES}/${velocityId}/backtests`, {
      ...formFields(again.body, `${RULES}/${velocityId}/backtests`),
      from: '2026-11-20T10:00',
      to: '2026-11-10T10:00',
    })
    assert.equal(refused.statusCode, 400)
    assert.match(refused.body, /<code>to<\/code>/)
    assert.match(refused.body, /value="2026-11-10T10:00"/)
  })

  test('the card page shows what is left of each limit, as GET /v1/cards/{id}/spend_limits says', async () => {
    const [limit] = (await api('GET', `/v1/cards/${card.id}/spend_limits`)).data.filter(
      (l: any) => l.source.rule_id === velocityId,
    )
    assert.equal(limit.used_count, 3)
    assert.equal(limit.remaining_count, 0)
    const page = main((await owner.agent.get(`/console/cards/${card.id}`)).body)
    const remaining = page.slice(page.indexOf('id="remaining-h"'), page.indexOf('id="rules-h"'))
    assert.ok(remaining.includes(`href="${RULES}/${velocityId}"`))
    assert.match(remaining, /3 of 2 authorizations/)
    assert.match(remaining, /0 authorizations/)
    assert.match(remaining, /in any 24 hours/)
  })

  test('a refused form names the field and keeps what was typed', async () => {
    const res = await create('condition', {
      name: 'Big foreign spend',
      level: 'card',
      ids: card.id,
      mode: 'active',
      c0_attribute: 'merchant_name',
      c0_operator: 'gt',
      c0_value: 'Casino Royale',
    })
    assert.equal(res.statusCode, 400, res.body.slice(0, 500))
    assert.match(res.body, /role="alert"/)
    assert.match(res.body, /parameters\.conditions\[0\]\.operator/)
    assert.match(res.body, /value="Casino Royale"/)
    assert.match(res.body, /value="Big foreign spend"/)
    assert.equal((await auditRows(t, 'authorization_rule.created')).length, 1)
  })

  test('a condition and a merchant lock made with the form read their rows', async () => {
    const condition = await create('condition', {
      name: 'No big foreign spend',
      level: 'card',
      ids: card.id,
      mode: 'shadow',
      c0_attribute: 'merchant_country',
      c0_operator: 'is_not_one_of',
      c0_value: 'usa, can',
      c1_attribute: 'amount',
      c1_operator: 'gt',
      c1_value: '20000',
      c2_attribute: '',
      c2_value: '',
    })
    await follow(owner.agent, condition)
    const c = await api('GET', `/v1/authorization_rules/${ruleIdOf(condition.headers.location)}`)
    assert.deepEqual(c.parameters.conditions, [
      { attribute: 'merchant_country', operator: 'is_not_one_of', value: ['USA', 'CAN'] },
      { attribute: 'amount', operator: 'gt', value: 20000 },
    ])
    const lock = await create('merchant_lock', {
      name: 'Groceries only',
      level: 'card',
      ids: card.id,
      mode: 'shadow',
      m0_name: 'Fresh*',
      m0_mcc: '',
      m0_country: '',
      m1_name: '',
      m1_mcc: '5411',
      m1_country: 'usa',
    })
    const lockPage = await follow(owner.agent, lock)
    const m = await api('GET', `/v1/authorization_rules/${ruleIdOf(lock.headers.location)}`)
    assert.deepEqual(m.parameters.merchants, [
      { name: 'Fresh*', mcc: null, country: null },
      { name: null, mcc: '5411', country: 'USA' },
    ])
    assert.match(main(lockPage.body), /Only these merchants may be approved/)
  })

  test('disable and enable, each audited', async () => {
    const page = await owner.agent.get(`${RULES}/${velocityId}`)
    const res = await owner.agent.post(`${RULES}/${velocityId}/status`, {
      ...formFields(page.body, `${RULES}/${velocityId}/status`),
    })
    assert.match((await follow(owner.agent, res)).body, /Rule disabled/)
    assert.equal((await api('GET', `/v1/authorization_rules/${velocityId}`)).status, 'disabled')
    assert.equal((await spend(900)).approved, true, 'a disabled rule declines nothing')
    const again = await owner.agent.get(`${RULES}/${velocityId}`)
    const enable = await owner.agent.post(`${RULES}/${velocityId}/status`, {
      ...formFields(again.body, `${RULES}/${velocityId}/status`),
    })
    assert.match((await follow(owner.agent, enable)).body, /Rule enabled/)
    assert.equal((await auditRows(t, 'authorization_rule.disabled')).length, 1)
    assert.equal((await auditRows(t, 'authorization_rule.enabled')).length, 1)
  })

  test('the card page lists the rules that apply to it, with a link to add one', async () => {
    const page = main((await owner.agent.get(`/console/cards/${card.id}`)).body)
    assert.ok(page.includes(`href="${RULES}/${velocityId}"`))
    assert.ok(page.includes(`href="${RULES}/new?level=card&amp;ids=${card.id}"`))
  })

  test('a viewer reads the list and a rule, sees no control, and every change is refused', async () => {
    await expectReadOnly(
      viewer,
      [RULES, `${RULES}/${velocityId}`, `/console/cards/${card.id}`],
      [
        [RULES, { type: 'condition', name: 'x' }],
        [`${RULES}/${velocityId}`, { name: 'x' }],
        [`${RULES}/${velocityId}/status`, { status: 'disabled' }],
        [`${RULES}/${velocityId}/delete`, {}],
        [`${RULES}/${velocityId}/backtests`, { from: '2026-11-01T00:00', to: '2026-11-02T00:00' }],
      ],
    )
    const list = main((await viewer.agent.get(RULES)).body)
    assert.doesNotMatch(list, /Create a rule/)
    const rule = main((await viewer.agent.get(`${RULES}/${velocityId}`)).body)
    assert.doesNotMatch(rule, /Delete this rule|Run backtest/)
    assert.match(rule, /This rule&#39;s backtests/)
    const cardPage = main((await viewer.agent.get(`/console/cards/${card.id}`)).body)
    assert.doesNotMatch(cardPage, /Add a rule/)
    assert.equal((await viewer.agent.get(`${RULES}/${velocityId}/delete`)).statusCode, 303)
    assert.equal((await viewer.agent.get(`${RULES}/new`)).statusCode, 303)
  })

  test('delete asks on a page of its own; the rule is then gone from the list and the API', async () => {
    const confirm = await owner.agent.get(`${RULES}/${velocityId}/delete`)
    assert.equal(confirm.statusCode, 200)
    assert.match(confirm.body, /This cannot be undone/)
    assert.match(confirm.body, /class="danger">Delete rule</)
    const res = await owner.agent.post(
      `${RULES}/${velocityId}/delete`,
      formFields(confirm.body, `${RULES}/${velocityId}/delete`),
    )
    assert.equal(res.headers.location, RULES)
    assert.match((await follow(owner.agent, res)).body, /Rule deleted/)
    const gone = await t.api(token, 'GET', `/v1/authorization_rules/${velocityId}`)
    assert.equal(gone.statusCode, 404)
    assert.ok(!main((await owner.agent.get(RULES)).body).includes(velocityId))
    assert.equal((await owner.agent.get(`${RULES}/${velocityId}`)).statusCode, 404)
    assert.deepEqual(
      (await auditRows(t, 'authorization_rule.deleted')).map((r) => r.object_id),
      [velocityId],
    )
  })

  test('search takes a rule id to its page', async () => {
    const rule = await api('POST', '/v1/authorization_rules', {
      name: 'Found by id',
      scope: { level: 'card', ids: [card.id] },
      type: 'condition',
      parameters: { conditions: [{ attribute: 'mcc', operator: 'is', value: '7995' }] },
      mode: 'shadow',
    })
    const res = await owner.agent.get(`/console/search?q=${rule.id}`)
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, `${RULES}/${rule.id}`)
  })
})
