import { test } from 'node:test'
import assert from 'node:assert/strict'
import { tokenStatusForCard } from '../../src/modules/network-tokens/service.js'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

async function activeCard(
  program: 'full' | 'basic' = 'full',
  tok = token,
  programs = tenant.programs,
): Promise<any> {
  const holder = await makeCardholder(t, tok)
  const account = await makeAccount(t, tok, programs[program].id, holder.id)
  return issuedCard(t, tok, cardBody(holder.id, account.id))
}

const provision = (body: Record<string, unknown>, tok = token) =>
  t.api(tok, 'POST', '/v1/simulate/network_tokens', body)
const move = (id: string, op: string) => t.api(token, 'POST', `/v1/network_tokens/${id}/${op}`)
const activate = (id: string) => t.api(token, 'POST', `/v1/simulate/network_tokens/${id}/activate`)

async function newToken(cardId: string, activateNow = true): Promise<any> {
  const res = await provision({
    card_id: cardId,
    wallet: 'apple_pay',
    ...(activateNow ? {} : { activate: false }),
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function moveOk(
  res: Promise<{ statusCode: number; body: string; json(): any }>,
  status: string,
): Promise<any> {
  const r = await res
  assert.equal(r.statusCode, 200, r.body)
  assert.equal(r.json().status, status)
  return r.json()
}

test('a wallet provisions an active card: the token is requested, then active at once, with both events', async () => {
  const card = await activeCard()
  const tok = await newToken(card.id)
  assert.match(tok.id, /^ntok_[0-9A-Z]{26}$/)
  assert.equal(tok.object, 'network_token')
  assert.equal(tok.card_id, card.id)
  assert.equal(tok.wallet, 'apple_pay')
  assert.equal(tok.status, 'active')
  assert.equal(tok.activated_at, tok.created_at)
  assert.equal(tok.deleted_at, null)
  const events = await eventsFor(t, tok.id)
  assert.deepEqual(
    events.map((e) => [e.type, e.object.status]),
    [
      ['network_token.created', 'requested'],
      ['network_token.updated', 'active'],
    ],
  )
  const read = await t.api(token, 'GET', `/v1/network_tokens/${tok.id}`)
  assert.equal(read.statusCode, 200, read.body)
  assert.deepEqual(read.json(), tok)
})

test('every move of the state table from active and suspended; deleted is terminal (token_deleted)', async () => {
  const card = await activeCard()
  const tok = await newToken(card.id)
  expectError(await move(tok.id, 'resume'), 422, 'token_invalid_state')
  expectError(await activate(tok.id), 422, 'token_invalid_state')
  await moveOk(move(tok.id, 'suspend'), 'suspended')
  expectError(await move(tok.id, 'suspend'), 422, 'token_invalid_state')
  expectError(await activate(tok.id), 422, 'token_invalid_state')
  await moveOk(move(tok.id, 'resume'), 'active')
  await moveOk(move(tok.id, 'suspend'), 'suspended')
  const deleted = await moveOk(move(tok.id, 'delete'), 'deleted')
  assert.ok(deleted.deleted_at)
  for (const op of ['suspend', 'resume', 'delete'])
    expectError(await move(tok.id, op), 422, 'token_deleted')
  expectError(await activate(tok.id), 422, 'token_deleted')
  assert.deepEqual(
    (await eventsFor(t, tok.id, 'network_token.updated')).map((e) => e.object.status),
    ['active', 'suspended', 'active', 'suspended', 'deleted'],
  )

  const direct = await newToken(card.id)
  await moveOk(move(direct.id, 'delete'), 'deleted')
})

test('a requested token can only be activated (simulator) or deleted', async () => {
  const card = await activeCard()
  const pending = await newToken(card.id, false)
  assert.equal(pending.status, 'requested')
  assert.equal(pending.activated_at, null)
  expectError(await move(pending.id, 'suspend'), 422, 'token_invalid_state')
  expectError(await move(pending.id, 'resume'), 422, 'token_invalid_state')
  const active = await moveOk(activate(pending.id), 'active')
  assert.ok(active.activated_at)
  const other = await newToken(card.id, false)
  await moveOk(move(other.id, 'delete'), 'deleted')
})

test('only an active card can be tokenized: pending, frozen and closed cards are refused with their state error', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const created = await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id))
  expectError(
    await provision({ card_id: created.json().id, wallet: 'google_pay' }),
    422,
    'card_not_provisioned',
    'card_id',
  )
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`)
  expectError(
    await provision({ card_id: card.id, wallet: 'google_pay' }),
    422,
    'card_invalid_state',
    'card_id',
  )
  await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  expectError(
    await provision({ card_id: card.id, wallet: 'google_pay' }),
    422,
    'card_closed',
    'card_id',
  )
  expectError(
    await provision({ card_id: 'card_00000000000000000000000000', wallet: 'google_pay' }),
    404,
    'card_not_found',
    'card_id',
  )
  expectError(
    await provision({ card_id: card.id, wallet: 'paypal' }),
    400,
    'invalid_parameter',
    'wallet',
  )
  expectError(
    await provision({ card_id: card.id, wallet: 'apple_pay', device: 'x' }),
    400,
    'unknown_parameter',
    'device',
  )
})

test('sim_basic has no token provisioning feed: 422 operation_unsupported', async () => {
  const card = await activeCard('basic')
  expectError(
    await provision({ card_id: card.id, wallet: 'samsung_pay' }),
    422,
    'operation_unsupported',
  )
})

test("lists filter by card, status and wallet; another organization's token is token_not_found", async () => {
  const card = await activeCard()
  const a = await newToken(card.id)
  const b = await newToken(card.id, false)
  const c = (await provision({ card_id: card.id, wallet: 'samsung_pay' })).json()
  const list = await t.api(token, 'GET', `/v1/network_tokens?card_id=${card.id}`)
  assert.equal(list.statusCode, 200, list.body)
  assert.equal(list.json().object, 'list')
  assert.equal(list.json().url, '/v1/network_tokens')
  assert.deepEqual(
    list.json().data.map((x: any) => x.id),
    [c.id, b.id, a.id],
  )
  const requested = (
    await t.api(token, 'GET', `/v1/network_tokens?card_id=${card.id}&status=requested`)
  ).json()
  assert.deepEqual(
    requested.data.map((x: any) => x.id),
    [b.id],
  )
  const samsung = (
    await t.api(token, 'GET', `/v1/network_tokens?card_id=${card.id}&wallet=samsung_pay`)
  ).json()
  assert.deepEqual(
    samsung.data.map((x: any) => x.id),
    [c.id],
  )
  const page = (await t.api(token, 'GET', `/v1/network_tokens?card_id=${card.id}&limit=2`)).json()
  assert.equal(page.has_more, true)
  const rest = (
    await t.api(
      token,
      'GET',
      `/v1/network_tokens?card_id=${card.id}&limit=2&starting_after=${page.next_cursor}`,
    )
  ).json()
  assert.deepEqual(
    rest.data.map((x: any) => x.id),
    [a.id],
  )
  expectError(
    await t.api(token, 'GET', '/v1/network_tokens?status=gone'),
    400,
    'invalid_parameter',
    'status',
  )

  const stranger = await createTenant(t)
  const strangerToken = await stranger.token()
  expectError(
    await t.api(strangerToken, 'GET', `/v1/network_tokens/${a.id}`),
    404,
    'token_not_found',
  )
  expectError(
    await t.api(strangerToken, 'POST', `/v1/network_tokens/${a.id}/suspend`),
    404,
    'token_not_found',
  )
  assert.deepEqual(
    (await t.api(strangerToken, 'GET', `/v1/network_tokens?card_id=${card.id}`)).json().data,
    [],
  )
  expectError(
    await t.api(token, 'GET', '/v1/network_tokens/ntok_00000000000000000000000000'),
    404,
    'token_not_found',
  )
  expectError(await t.api(token, 'GET', '/v1/network_tokens/nonsense'), 404, 'token_not_found')
})

test('reads need cards:read, moves and provisioning need cards:write', async () => {
  const card = await activeCard()
  const tok = await newToken(card.id)
  const reader = await tenant.token('cards:read')
  const writer = await tenant.token('cards:write')
  assert.equal((await t.api(reader, 'GET', `/v1/network_tokens/${tok.id}`)).statusCode, 200)
  expectError(
    await t.api(reader, 'POST', `/v1/network_tokens/${tok.id}/suspend`),
    403,
    'insufficient_scope',
  )
  expectError(
    await t.api(reader, 'POST', '/v1/simulate/network_tokens', {
      card_id: card.id,
      wallet: 'apple_pay',
    }),
    403,
    'insufficient_scope',
  )
  expectError(await t.api(writer, 'GET', `/v1/network_tokens/${tok.id}`), 403, 'insufficient_scope')
  await moveOk(t.api(writer, 'POST', `/v1/network_tokens/${tok.id}/suspend`), 'suspended')
})

test("tokenStatusForCard answers the status of the card's own token and null for anything else", async () => {
  const card = await activeCard()
  const other = await activeCard()
  const tok = await newToken(card.id)
  await move(tok.id, 'suspend')
  const scope = { organizationId: tenant.organizationId, environment: 'sandbox' as const }
  assert.equal(await tokenStatusForCard(t.deps.db, scope, tok.id, card.id), 'suspended')
  assert.equal(await tokenStatusForCard(t.deps.db, scope, tok.id, other.id), null)
  assert.equal(
    await tokenStatusForCard(t.deps.db, { ...scope, environment: 'production' }, tok.id, card.id),
    null,
  )
  assert.equal(
    await tokenStatusForCard(t.deps.db, scope, 'ntok_00000000000000000000000000', card.id),
    null,
  )
  assert.equal(await tokenStatusForCard(t.deps.db, scope, 'garbage', card.id), null)
})

test('in production the simulator routes answer the identical 404 of an unknown path', async () => {
  const live = await createTenant(t, { environment: 'production' })
  const liveToken = await live.token()
  const shape = (res: { statusCode: number; headers: Record<string, unknown>; json(): any }) => {
    const { request_id: _r, ...error } = res.json().error
    return { status: res.statusCode, type: res.headers['content-type'], error }
  }
  const reference = shape(
    await t.api(liveToken, 'POST', '/v1/simulate/no-such-thing', {
      card_id: 'x',
      wallet: 'apple_pay',
    }),
  )
  assert.equal(reference.status, 404)
  assert.deepEqual(
    shape(
      await t.api(liveToken, 'POST', '/v1/simulate/network_tokens', {
        card_id: 'x',
        wallet: 'apple_pay',
      }),
    ),
    reference,
  )
  assert.deepEqual(
    shape(
      await t.api(
        liveToken,
        'POST',
        '/v1/simulate/network_tokens/ntok_00000000000000000000000000/activate',
        {},
      ),
    ),
    reference,
  )
})

test('authorizations through a requested, suspended or deleted token decline token_inactive; an active one approves', async () => {
  const card = await activeCard()
  const credit = await t.api(token, 'POST', `/v1/accounts/${card.account_id}/credit`, {
    amount: 10_000,
  })
  assert.equal(credit.statusCode, 200, credit.body)
  const authorize = async (tokenId: string): Promise<any> => {
    const res = await t.api(token, 'POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 100,
      currency: 'USD',
      merchant: { name: 'Corner Cafe' },
      network_token_id: tokenId,
    })
    assert.equal(res.statusCode, 201, res.body)
    return res.json()
  }
  const tok = await newToken(card.id)
  const approved = await authorize(tok.id)
  assert.equal(approved.approved, true)
  assert.equal(approved.network_token_id, tok.id)
  await move(tok.id, 'suspend')
  assert.deepEqual(await authorize(tok.id).then((a) => [a.approved, a.decline_reason]), [
    false,
    'token_inactive',
  ])
  await move(tok.id, 'resume')
  assert.equal((await authorize(tok.id)).approved, true)
  await move(tok.id, 'delete')
  assert.deepEqual(await authorize(tok.id).then((a) => [a.approved, a.decline_reason]), [
    false,
    'token_inactive',
  ])
  const requested = await newToken(card.id, false)
  assert.deepEqual(await authorize(requested.id).then((a) => [a.approved, a.decline_reason]), [
    false,
    'token_inactive',
  ])
})

test("closing a card deletes its network tokens (network_token.updated); a lost card's replacement does the same for the old card", async () => {
  const card = await activeCard()
  const active = await newToken(card.id)
  const suspended = await newToken(card.id)
  await moveOk(move(suspended.id, 'suspend'), 'suspended')
  const requested = await newToken(card.id, false)
  const closed = await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  assert.equal(closed.statusCode, 200, closed.body)
  for (const tok of [active, suspended, requested]) {
    const read = (await t.api(token, 'GET', `/v1/network_tokens/${tok.id}`)).json()
    assert.equal(read.status, 'deleted', tok.id)
    assert.ok(read.deleted_at)
    const events = await eventsFor(t, tok.id, 'network_token.updated')
    assert.equal(events.at(-1)!.object.status, 'deleted')
    expectError(await move(tok.id, 'resume'), 422, 'token_deleted')
  }

  const lost = await activeCard()
  const wallet = await newToken(lost.id)
  const replaced = await t.api(token, 'POST', `/v1/cards/${lost.id}/replace`, { reason: 'lost' })
  assert.equal(replaced.statusCode, 201, replaced.body)
  assert.equal(
    (await t.api(token, 'GET', `/v1/network_tokens/${wallet.id}`)).json().status,
    'deleted',
  )
})
