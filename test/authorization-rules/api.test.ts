import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { eventsFor, eventsOf, expectError } from '../helpers/api.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, makeAccount, makeCardholder } from '../cards/support.js'

let t: TestApp
let tenant: TestClient
let token: string

/** The objects of one organization a scope may name: two cardholders, their accounts and cards on sim_full, one on sim_basic. */
interface Objects {
  program: string
  basicProgram: string
  holder1: string
  holder2: string
  account1: string
  account2: string
  basicAccount: string
  card1: string
  card2: string
  card3: string
  basicCard: string
}

async function card(tok: string, holder: string, account: string): Promise<string> {
  const res = await t.api(tok, 'POST', '/v1/cards', cardBody(holder, account))
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

async function objectsOf(client: TestClient, tok: string): Promise<Objects> {
  const holder1 = (await makeCardholder(t, tok)).id
  const holder2 = (await makeCardholder(t, tok)).id
  const account1 = (await makeAccount(t, tok, client.programs.full.id, holder1)).id
  const account2 = (await makeAccount(t, tok, client.programs.full.id, holder2)).id
  const basicAccount = (await makeAccount(t, tok, client.programs.basic.id, holder2)).id
  return {
    program: client.programs.full.id,
    basicProgram: client.programs.basic.id,
    holder1,
    holder2,
    account1,
    account2,
    basicAccount,
    card1: await card(tok, holder1, account1),
    card2: await card(tok, holder1, account1),
    card3: await card(tok, holder2, account2),
    basicCard: await card(tok, holder2, basicAccount),
  }
}

let own: Objects
let other: Objects
let otherClient: TestClient
let otherToken: string

withTenant(async (fixture) => {
  ;({ t, tenant, token } = fixture)
  own = await objectsOf(tenant, token)
  otherClient = await createTenant(t)
  otherToken = await otherClient.token()
  other = await objectsOf(otherClient, otherToken)
})

const VELOCITY = {
  window: { type: 'day' },
  aggregate: 'card',
  limit_amount: 50_000,
  filters: { include_mccs: ['7995'] },
}

function body(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Gambling, 500.00 a day',
    scope: { level: 'program', ids: [own.program] },
    type: 'velocity_limit',
    parameters: VELOCITY,
    mode: 'active',
    ...over,
  }
}

const post = (b: unknown, tok = token, headers?: Record<string, string>) =>
  t.api(tok, 'POST', '/v1/authorization_rules', b, headers)
const get = (url: string, tok = token) => t.api(tok, 'GET', url)

async function created(b: Record<string, unknown>, tok = token): Promise<any> {
  const res = await post(b, tok)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const countRules = async () =>
  Number(
    (
      await t.deps.db
        .selectFrom('authorization_rules')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('create, read, change and delete', () => {
  test('POST answers 201 with an arl_ id, the scope, normalized parameters, enabled; authorization_rule.created carries what GET answers', async () => {
    const rule = await created(
      body({
        scope: { level: 'program', ids: [own.program, own.program], exclude_ids: [own.card2] },
      }),
    )
    assert.match(rule.id, /^arl_[0-9A-HJKMNP-TV-Z]{26}$/)
    assert.equal(rule.object, 'authorization_rule')
    assert.equal(rule.name, 'Gambling, 500.00 a day')
    assert.deepEqual(rule.scope, { level: 'program', ids: [own.program], exclude_ids: [own.card2] })
    assert.equal(rule.type, 'velocity_limit')
    assert.deepEqual(rule.parameters, {
      window: { type: 'day', seconds: null },
      aggregate: 'card',
      limit_amount: 50_000,
      limit_count: null,
      filters: {
        include_mccs: ['7995'],
        exclude_mccs: [],
        include_countries: [],
        exclude_countries: [],
        merchant_currencies: [],
      },
    })
    assert.equal(rule.mode, 'active')
    assert.equal(rule.status, 'enabled')
    assert.equal(rule.created_at, rule.updated_at)
    const read = (await get(`/v1/authorization_rules/${rule.id}`)).json()
    assert.deepEqual(read, rule)
    const events = await eventsFor(t, rule.id, 'authorization_rule.created')
    assert.equal(events.length, 1)
    assert.deepEqual(events[0].object, read)
  })

  test('each type and scope level is accepted as the interface shows it', async () => {
    const condition = await created(
      body({
        name: 'Foreign and large',
        scope: { level: 'card', ids: [own.card1] },
        type: 'condition',
        parameters: {
          conditions: [
            { attribute: 'merchant_country', operator: 'is_not', value: 'usa' },
            { attribute: 'amount', operator: 'gt', value: 20_000 },
          ],
        },
      }),
    )
    assert.deepEqual(condition.parameters.conditions[0], {
      attribute: 'merchant_country',
      operator: 'is_not',
      value: 'USA',
    })
    const lock = await created(
      body({
        name: 'Groceries only',
        scope: { level: 'cardholder', ids: [own.holder2], exclude_ids: [own.account2] },
        type: 'merchant_lock',
        parameters: { merchants: [{ mcc: '5411' }, { name: 'AMZN*', country: 'usa' }] },
        mode: 'shadow',
      }),
    )
    assert.deepEqual(lock.parameters.merchants, [
      { name: null, mcc: '5411', country: null },
      { name: 'AMZN*', mcc: null, country: 'USA' },
    ])
    assert.equal(lock.mode, 'shadow')
    const rolling = await created(
      body({
        scope: { level: 'account', ids: [own.account1], exclude_ids: [own.card1] },
        parameters: {
          window: { type: 'rolling', seconds: 3600 },
          aggregate: 'account',
          limit_count: 3,
        },
      }),
    )
    assert.deepEqual(rolling.parameters.window, { type: 'rolling', seconds: 3600 })
  })

  test("another organization's rule, a malformed id and an unknown id answer 404 authorization_rule_not_found", async () => {
    const theirs = await created(
      body({ scope: { level: 'program', ids: [other.program] } }),
      otherToken,
    )
    for (const id of [theirs.id, 'arl_nope', 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X']) {
      expectError(await get(`/v1/authorization_rules/${id}`), 404, 'authorization_rule_not_found')
      expectError(
        await t.api(token, 'PATCH', `/v1/authorization_rules/${id}`, { name: 'mine now' }),
        404,
        'authorization_rule_not_found',
      )
      expectError(
        await t.api(token, 'DELETE', `/v1/authorization_rules/${id}`),
        404,
        'authorization_rule_not_found',
      )
    }
    const list = (await get('/v1/authorization_rules?limit=100')).json()
    assert.ok(!list.data.some((r: any) => r.id === theirs.id))
    assert.equal((await get(`/v1/authorization_rules/${theirs.id}`, otherToken)).statusCode, 200)
  })

  test('PATCH changes name, parameters (read against the type), mode and status; authorization_rule.updated carries the result; nothing changed writes nothing', async () => {
    const rule = await created(body())
    t.clock.advance(1_000)
    const res = await t.api(token, 'PATCH', `/v1/authorization_rules/${rule.id}`, {
      name: 'Gambling, 200.00 a week',
      parameters: { window: { type: 'week' }, aggregate: 'cardholder', limit_amount: 20_000 },
      mode: 'shadow',
      status: 'disabled',
    })
    assert.equal(res.statusCode, 200, res.body)
    const changed = res.json()
    assert.equal(changed.name, 'Gambling, 200.00 a week')
    assert.deepEqual(changed.parameters.window, { type: 'week', seconds: null })
    assert.equal(changed.parameters.aggregate, 'cardholder')
    assert.deepEqual(
      changed.parameters.filters.include_mccs,
      [],
      'the parameters are replaced whole',
    )
    assert.equal(changed.mode, 'shadow')
    assert.equal(changed.status, 'disabled')
    assert.deepEqual(changed.scope, rule.scope)
    assert.equal(changed.created_at, rule.created_at)
    assert.notEqual(changed.updated_at, rule.updated_at)
    assert.deepEqual((await get(`/v1/authorization_rules/${rule.id}`)).json(), changed)
    const updates = await eventsFor(t, rule.id, 'authorization_rule.updated')
    assert.equal(updates.length, 1)
    assert.deepEqual(updates[0].object, changed)

    t.clock.advance(1_000)
    const same = await t.api(token, 'PATCH', `/v1/authorization_rules/${rule.id}`, {
      name: changed.name,
      status: 'disabled',
      parameters: { aggregate: 'cardholder', limit_amount: 20_000, window: { type: 'week' } },
    })
    assert.equal(same.statusCode, 200, same.body)
    assert.deepEqual(same.json(), changed, 'nothing changed: updated_at stays')
    assert.equal((await eventsFor(t, rule.id, 'authorization_rule.updated')).length, 1)
  })

  test('PATCH reads parameters against the stored type, and refuses the scope and the type', async () => {
    const rule = await created(body())
    const patch = (b: unknown) => t.api(token, 'PATCH', `/v1/authorization_rules/${rule.id}`, b)
    expectError(
      await patch({ parameters: { window: { type: 'hour' }, aggregate: 'card', limit_count: 1 } }),
      400,
      'invalid_parameter',
      'parameters.window.type',
    )
    expectError(
      await patch({
        parameters: { conditions: [{ attribute: 'amount', operator: 'gt', value: 1 }] },
      }),
      400,
      'invalid_parameter',
    )
    expectError(await patch({ type: 'condition' }), 400, 'unknown_parameter', 'type')
    expectError(
      await patch({ scope: { level: 'card', ids: [own.card1] } }),
      400,
      'unknown_parameter',
      'scope',
    )
    expectError(await patch({ status: 'deleted' }), 400, 'invalid_parameter', 'status')
    expectError(await patch({ mode: 'loud' }), 400, 'invalid_parameter', 'mode')
    assert.deepEqual((await get(`/v1/authorization_rules/${rule.id}`)).json(), rule)
  })

  test('DELETE answers {id, object, deleted}; the rule is gone from GET and lists; authorization_rule.deleted carries it as it was', async () => {
    const rule = await created(body({ scope: { level: 'card', ids: [own.card3] } }))
    const res = await t.api(token, 'DELETE', `/v1/authorization_rules/${rule.id}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { id: rule.id, object: 'authorization_rule', deleted: true })
    expectError(
      await get(`/v1/authorization_rules/${rule.id}`),
      404,
      'authorization_rule_not_found',
    )
    expectError(
      await t.api(token, 'DELETE', `/v1/authorization_rules/${rule.id}`),
      404,
      'authorization_rule_not_found',
    )
    const list = (await get(`/v1/authorization_rules?card_id=${own.card3}&limit=100`)).json()
    assert.ok(!list.data.some((r: any) => r.id === rule.id))
    const deleted = await eventsFor(t, rule.id, 'authorization_rule.deleted')
    assert.equal(deleted.length, 1)
    assert.equal(deleted[0].object.id, rule.id)
    assert.deepEqual(deleted[0].object.scope, rule.scope)
    const row = await t.deps.db
      .selectFrom('authorization_rules')
      .select(['deleted_at'])
      .where('id', '=', rule.id)
      .executeTakeFirstOrThrow()
    assert.ok(row.deleted_at, 'the row stays, marked deleted')
  })
})

describe('the rules that apply to a card', () => {
  let org: TestClient
  let tok: string
  let o: Objects
  const ids: Record<string, string> = {}

  before(async () => {
    org = await createTenant(t)
    tok = await org.token()
    o = await objectsOf(org, tok)
    const make = async (
      key: string,
      scope: Record<string, unknown>,
      over: Record<string, unknown> = {},
    ) => {
      ids[key] = (await created(body({ name: key, scope, ...over }), tok)).id
    }
    await make('program', { level: 'program', ids: [o.program] })
    await make('programButCard2', { level: 'program', ids: [o.program], exclude_ids: [o.card2] })
    await make('programButHolder1', {
      level: 'program',
      ids: [o.program],
      exclude_ids: [o.holder1],
    })
    await make('programButAccount2', {
      level: 'program',
      ids: [o.basicProgram, o.program],
      exclude_ids: [o.account2],
    })
    await make('account1', { level: 'account', ids: [o.account1] })
    await make('holder2', { level: 'cardholder', ids: [o.holder2] })
    await make('holder1ButAccount1', {
      level: 'cardholder',
      ids: [o.holder1],
      exclude_ids: [o.account1],
    })
    await make('card2', { level: 'card', ids: [o.card2] })
    await make('basic', { level: 'program', ids: [o.basicProgram] })
    await make('disabled', { level: 'card', ids: [o.card1] })
    await make('deleted', { level: 'card', ids: [o.card1] })
    const off = await t.api(tok, 'PATCH', `/v1/authorization_rules/${ids.disabled}`, {
      status: 'disabled',
    })
    assert.equal(off.statusCode, 200, off.body)
    assert.equal(
      (await t.api(tok, 'DELETE', `/v1/authorization_rules/${ids.deleted}`)).statusCode,
      200,
    )
  })

  const rulesOf = async (cardId: string, caller = tok) => {
    const res = await get(`/v1/authorization_rules?card_id=${cardId}&limit=100`, caller)
    assert.equal(res.statusCode, 200, res.body)
    return res.json().data.map((r: any) => r.name)
  }

  test('its program, account, cardholder or itself, minus exclusions of the card, its account or its cardholder; disabled ones too, newest first', async () => {
    assert.deepEqual(await rulesOf(o.card1), [
      'disabled',
      'account1',
      'programButAccount2',
      'programButCard2',
      'program',
    ])
    assert.deepEqual(await rulesOf(o.card2), ['card2', 'account1', 'programButAccount2', 'program'])
    assert.deepEqual(await rulesOf(o.card3), [
      'holder2',
      'programButHolder1',
      'programButCard2',
      'program',
    ])
    assert.deepEqual(await rulesOf(o.basicCard), ['basic', 'holder2', 'programButAccount2'])
    const all = (await get('/v1/authorization_rules?limit=100', tok))
      .json()
      .data.map((r: any) => r.name)
    assert.equal(all.length, 10, 'every live rule, without the filter')
  })

  test("an unknown card or another organization's answers an empty list", async () => {
    assert.deepEqual(await rulesOf('card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M'), [])
    assert.deepEqual(await rulesOf('not-a-card'), [])
    assert.deepEqual(await rulesOf(own.card1), [])
  })

  test('the filter pages like any list', async () => {
    const first = (await get(`/v1/authorization_rules?card_id=${o.card1}&limit=2`, tok)).json()
    assert.deepEqual(
      first.data.map((r: any) => r.name),
      ['disabled', 'account1'],
    )
    assert.equal(first.has_more, true)
    const second = (
      await get(
        `/v1/authorization_rules?card_id=${o.card1}&limit=2&starting_after=${encodeURIComponent(first.next_cursor)}`,
        tok,
      )
    ).json()
    assert.deepEqual(
      second.data.map((r: any) => r.name),
      ['programButAccount2', 'programButCard2'],
    )
    const third = (
      await get(
        `/v1/authorization_rules?card_id=${o.card1}&limit=2&starting_after=${encodeURIComponent(second.next_cursor)}`,
        tok,
      )
    ).json()
    assert.deepEqual(
      third.data.map((r: any) => r.name),
      ['program'],
    )
    assert.equal(third.has_more, false)
    assert.equal(third.next_cursor, null)
  })

  test('the list pages newest first, and its cursors belong to it', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const url: string = `/v1/authorization_rules?limit=3${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`
      const page: any = (await get(url, tok)).json()
      assert.ok(page.data.length <= 3)
      seen.push(...page.data.map((r: any) => r.id))
      cursor = page.next_cursor
    } while (cursor)
    assert.equal(seen.length, 10)
    assert.deepEqual(seen, [...seen].sort().reverse())
    expectError(
      await get('/v1/authorization_rules?starting_after=arl_01JD3R5M7N9P1Q3R5S7T9V1W3X', tok),
      400,
      'invalid_parameter',
      'starting_after',
    )
  })
})

describe('bad input answers 400 naming the field, and creates nothing', () => {
  test('each refusal of the interface', async () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      [
        'an unknown attribute',
        body({
          type: 'condition',
          parameters: {
            conditions: [{ attribute: 'merchant_city', operator: 'is', value: 'Paris' }],
          },
        }),
        'invalid_parameter',
        'parameters.conditions[0].attribute',
      ],
      [
        'an unknown operator',
        body({
          type: 'condition',
          parameters: {
            conditions: [
              { attribute: 'amount', operator: 'gt', value: 1 },
              { attribute: 'amount', operator: 'between', value: 1 },
            ],
          },
        }),
        'invalid_parameter',
        'parameters.conditions[1].operator',
      ],
      [
        'an unknown window',
        body({ parameters: { ...VELOCITY, window: { type: 'fortnight' } } }),
        'invalid_parameter',
        'parameters.window.type',
      ],
      [
        'a limit of neither amount nor count',
        body({ parameters: { window: { type: 'day' }, aggregate: 'card' } }),
        'invalid_parameter',
        'parameters.limit_amount',
      ],
      [
        "an id of another organization's program",
        body({ scope: { level: 'program', ids: [own.program, other.program] } }),
        'invalid_parameter',
        'scope.ids[1]',
      ],
      [
        "another organization's card",
        body({ scope: { level: 'card', ids: [other.card1] } }),
        'invalid_parameter',
        'scope.ids[0]',
      ],
      [
        "another organization's account",
        body({ scope: { level: 'account', ids: [own.account1, own.account2, other.account1] } }),
        'invalid_parameter',
        'scope.ids[2]',
      ],
      [
        "another organization's cardholder",
        body({ scope: { level: 'cardholder', ids: [other.holder1] } }),
        'invalid_parameter',
        'scope.ids[0]',
      ],
      [
        "an id of another level's prefix",
        body({ scope: { level: 'account', ids: [own.card1] } }),
        'invalid_parameter',
        'scope.ids[0]',
      ],
      [
        'an unknown id of the level',
        body({ scope: { level: 'card', ids: ['card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M'] } }),
        'invalid_parameter',
        'scope.ids[0]',
      ],
      [
        "an exclusion of another organization's card",
        body({ scope: { level: 'program', ids: [own.program], exclude_ids: [other.card1] } }),
        'invalid_parameter',
        'scope.exclude_ids[0]',
      ],
      [
        'an exclusion not under the scope',
        body({
          scope: { level: 'account', ids: [own.account1], exclude_ids: [own.card1, own.card3] },
        }),
        'invalid_parameter',
        'scope.exclude_ids[1]',
      ],
      [
        "an exclusion of a card on another of the organization's programs",
        body({ scope: { level: 'program', ids: [own.program], exclude_ids: [own.basicCard] } }),
        'invalid_parameter',
        'scope.exclude_ids[0]',
      ],
      [
        'an exclusion of a kind not under the level',
        body({ scope: { level: 'account', ids: [own.account1], exclude_ids: [own.holder1] } }),
        'invalid_parameter',
        'scope.exclude_ids[0]',
      ],
      [
        'an exclusion under a card',
        body({ scope: { level: 'card', ids: [own.card1], exclude_ids: [own.card1] } }),
        'invalid_parameter',
        'scope.exclude_ids[0]',
      ],
      [
        'an unknown level',
        body({ scope: { level: 'team', ids: [own.program] } }),
        'invalid_parameter',
        'scope.level',
      ],
      ['no ids', body({ scope: { level: 'program', ids: [] } }), 'invalid_parameter', 'scope.ids'],
      ['an unknown type', body({ type: 'geofence' }), 'invalid_parameter', 'type'],
      ['an unknown mode', body({ mode: 'loud' }), 'invalid_parameter', 'mode'],
      ['no mode', { ...body(), mode: undefined }, 'missing_parameter', 'mode'],
      [
        'parameters that are not an object',
        body({ parameters: [1] }),
        'invalid_parameter',
        'parameters',
      ],
      ['an unknown body field', body({ priority: 1 }), 'unknown_parameter', 'priority'],
      [
        'an unknown parameter',
        body({ parameters: { ...VELOCITY, currency: 'USD' } }),
        'unknown_parameter',
        'parameters.currency',
      ],
    ]
    const before = await countRules()
    for (const [what, b, code, param] of cases) {
      const res = await post(b)
      const error = expectError(res, 400, code, param)
      assert.ok(error.message.includes(param), `${what}: ${error.message}`)
    }
    assert.equal(await countRules(), before, 'nothing was created')
  })

  test('a bad parameter and a bad scope id are reported together, each named', async () => {
    const res = await post(
      body({
        scope: { level: 'card', ids: [own.card1, other.card2] },
        parameters: { ...VELOCITY, aggregate: 'program' },
      }),
    )
    const error = expectError(res, 400, 'invalid_parameter')
    assert.deepEqual(
      error.errors.map((e: any) => e.param),
      ['parameters.aggregate', 'scope.ids[1]'],
    )
  })

  test("the caller's own object of the other environment answers 403 environment_mismatch naming the field", async () => {
    const live = await createTenant(t, {
      organizationId: tenant.organizationId,
      environment: 'production',
    })
    const liveToken = await live.token()
    const program = await t.operator('POST', '/operator/v1/programs', {
      organization_id: tenant.organizationId,
      environment: 'production',
      name: 'Live',
      processor: 'sim_full',
      currencies: ['USD'],
    })
    const holder = await makeCardholder(t, liveToken)
    const account = await makeAccount(t, liveToken, program.id, holder.id)
    const liveCard = await card(liveToken, holder.id, account.id)
    expectError(
      await post(body({ scope: { level: 'program', ids: [own.program, program.id] } })),
      403,
      'environment_mismatch',
      'scope.ids[1]',
    )
    expectError(
      await post(body({ scope: { level: 'card', ids: [liveCard] } })),
      403,
      'environment_mismatch',
      'scope.ids[0]',
    )
    expectError(
      await post(
        body({ scope: { level: 'program', ids: [own.program], exclude_ids: [account.id] } }),
      ),
      403,
      'environment_mismatch',
      'scope.exclude_ids[0]',
    )
    expectError(
      await get(`/v1/authorization_rules?card_id=${liveCard}`),
      403,
      'environment_mismatch',
      'card_id',
    )
    const sandboxRule = await created(body())
    expectError(
      await get(`/v1/authorization_rules/${sandboxRule.id}`, liveToken),
      403,
      'environment_mismatch',
    )
    assert.deepEqual((await get('/v1/authorization_rules', liveToken)).json().data, [])
  })
})

describe('scopes and idempotency', () => {
  test('reads need cards:read and writes cards:write', async () => {
    const readOnly = await tenant.token('cards:read')
    const noCards = await tenant.token('cardholders:read accounts:read')
    const rule = await created(body())
    assert.equal((await get('/v1/authorization_rules', readOnly)).statusCode, 200)
    assert.equal((await get(`/v1/authorization_rules/${rule.id}`, readOnly)).statusCode, 200)
    const refused = [
      await post(body(), readOnly),
      await t.api(readOnly, 'PATCH', `/v1/authorization_rules/${rule.id}`, { name: 'x' }),
      await t.api(readOnly, 'DELETE', `/v1/authorization_rules/${rule.id}`),
      await get('/v1/authorization_rules', noCards),
      await get(`/v1/authorization_rules/${rule.id}`, noCards),
    ]
    for (const res of refused) expectError(res, 403, 'insufficient_scope')
    assert.equal((await get(`/v1/authorization_rules/${rule.id}`)).json().name, rule.name)
  })

  test('a POST retried with its Idempotency-Key creates one rule and one event; another body under the key is refused', async () => {
    const key = { 'Idempotency-Key': `rule-${Date.now()}` }
    const b = body({ name: 'Once', scope: { level: 'card', ids: [own.card2] } })
    const first = await post(b, token, key)
    assert.equal(first.statusCode, 201, first.body)
    const again = await post(b, token, key)
    assert.equal(again.statusCode, 201)
    assert.equal(again.headers['idempotent-replay'], 'true')
    assert.deepEqual(again.json(), first.json())
    const rows = await t.deps.db
      .selectFrom('authorization_rules')
      .select('id')
      .where('name', '=', 'Once')
      .execute()
    assert.equal(rows.length, 1)
    assert.equal((await eventsFor(t, first.json().id, 'authorization_rule.created')).length, 1)
    expectError(await post({ ...b, name: 'Twice' }, token, key), 409, 'idempotency_key_reuse')
  })

  test('a PATCH retried with its Idempotency-Key is answered again without a second change or event', async () => {
    const rule = await created(body())
    const key = { 'Idempotency-Key': `rule-patch-${Date.now()}` }
    const patch = () =>
      t.api(token, 'PATCH', `/v1/authorization_rules/${rule.id}`, { mode: 'shadow' }, key)
    const first = await patch()
    assert.equal(first.statusCode, 200, first.body)
    await t.api(token, 'PATCH', `/v1/authorization_rules/${rule.id}`, { mode: 'active' })
    const again = await patch()
    assert.equal(again.headers['idempotent-replay'], 'true')
    assert.equal(again.json().mode, 'shadow', 'the first answer, replayed')
    assert.equal(
      (await get(`/v1/authorization_rules/${rule.id}`)).json().mode,
      'active',
      'not applied twice',
    )
    assert.equal((await eventsFor(t, rule.id, 'authorization_rule.updated')).length, 2)
  })

  test('events stay with their organization', async () => {
    const theirs = (await eventsOf(t, otherClient.organizationId)).filter((e) =>
      e.type.startsWith('authorization_rule.'),
    )
    assert.ok(theirs.length > 0)
    assert.ok(
      theirs.every((e) =>
        e.object.scope.ids.every((id: string) => Object.values(other).includes(id)),
      ),
    )
  })
})
