import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { approvedCardholder, ledgerEntries } from '../accounts/support.js'
import {
  MERCHANT,
  authorizeRaw,
  balances,
  fundedCard,
  type Funded,
} from '../authorizations/support.js'

// Values PostgreSQL text cannot hold (unpaired UTF-16 surrogates) are refused by name before any database work,
// so they never reach a batched statement where they could fail the requests that share it (decisions.md,
// "Exactly once under failure": one request never fails another). One organization sends only such values while
// another's valid credits and authorizations run at the same time, through the same batchers.

let t: TestApp
let bad: { tenant: TestClient; token: string; funded: Funded }
let good: { tenant: TestClient; token: string; funded: Funded }

const FUNDS = 1_000_000

before(async () => {
  t = await startTestApp()
  const setUp = async () => {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    return { tenant, token, funded: await fundedCard(t, tenant, token, FUNDS) }
  }
  bad = await setUp()
  good = await setUp()
})
after(async () => {
  await t?.close()
})

const HIGH = 'ref-\uD800-x'
const LOW = '\uDC00tail'

interface BadCall {
  param: string
  send(): Promise<LightMyRequestResponse>
}

/** The bad organization's calls: each carries one unpaired surrogate in a different field. */
function badCalls(): BadCall[] {
  const account = bad.funded.account.id
  const credit = (body: Record<string, unknown>) => () =>
    t.api(bad.token, 'POST', `/v1/accounts/${account}/credit`, { amount: 100, ...body })
  const debit = (body: Record<string, unknown>) => () =>
    t.api(bad.token, 'POST', `/v1/accounts/${account}/debit`, { amount: 100, ...body })
  const authorize = (extra: Record<string, unknown>) => () =>
    authorizeRaw(t, bad.token, bad.funded.card.id, 100, extra)
  const kinds: BadCall[] = [
    { param: 'reference', send: credit({ reference: HIGH }) },
    { param: 'description', send: credit({ description: LOW }) },
    { param: 'client_transaction_id', send: credit({ client_transaction_id: HIGH }) },
    { param: 'reference', send: debit({ reference: LOW }) },
    { param: 'description', send: debit({ description: HIGH }) },
    { param: 'merchant.name', send: authorize({ merchant: { ...MERCHANT, name: HIGH } }) },
    { param: 'merchant.city', send: authorize({ merchant: { ...MERCHANT, city: LOW } }) },
    {
      param: 'metadata.note',
      send: () =>
        t.api(bad.token, 'POST', '/v1/accounts', {
          program_id: bad.tenant.programs.full.id,
          cardholder_id: bad.funded.holder.id,
          currency: 'USD',
          metadata: { note: HIGH },
        }),
    },
    {
      param: 'metadata.k\\ud800',
      send: () =>
        t.api(bad.token, 'POST', '/v1/accounts', {
          program_id: bad.tenant.programs.full.id,
          cardholder_id: bad.funded.holder.id,
          currency: 'USD',
          metadata: { 'k\uD800': 'v' },
        }),
    },
  ]
  return Array.from({ length: 100 }, (_, i) => kinds[i % kinds.length])
}

test("100 requests carrying unpaired surrogates answer 400 invalid_parameter by name while another organization's concurrent credits and authorizations all succeed", async () => {
  const goodAccount = good.funded.account.id
  const credits = Array.from({ length: 50 }, (_, i) => ({
    amount: 1 + i,
    client_transaction_id: `good-${i}`,
    reference: `good credit ${i}`,
    description: 'a valid credit',
  }))
  const authorizations = Array.from({ length: 40 }, (_, i) => 100 + i)
  const badOnes = badCalls()
  const goodCredits = credits.map(
    (body) => () => t.api(good.token, 'POST', `/v1/accounts/${goodAccount}/credit`, body),
  )
  const goodAuths = authorizations.map(
    (amount, i) => () =>
      authorizeRaw(t, good.token, good.funded.card.id, amount, {
        merchant: { ...MERCHANT, name: `Good Merchant ${i}` },
      }),
  )

  // Interleaved, all in flight at once.
  const calls: {
    kind: 'bad' | 'credit' | 'auth'
    index: number
    send: () => Promise<LightMyRequestResponse>
  }[] = []
  for (let i = 0; i < 100; i++) {
    calls.push({ kind: 'bad', index: i, send: badOnes[i].send })
    if (i < goodCredits.length) calls.push({ kind: 'credit', index: i, send: goodCredits[i] })
    if (i < goodAuths.length) calls.push({ kind: 'auth', index: i, send: goodAuths[i] })
  }
  const responses = await Promise.all(calls.map((c) => c.send()))

  const wrong: string[] = []
  responses.forEach((res, n) => {
    const call = calls[n]
    if (call.kind === 'bad') {
      const error = res.statusCode === 400 ? res.json().error : undefined
      if (
        error?.code !== 'invalid_parameter' ||
        error.param !== badOnes[call.index].param ||
        !/unpaired UTF-16 surrogate/.test(error.message)
      ) {
        wrong.push(
          `bad #${call.index} (${badOnes[call.index].param}) → ${res.statusCode} ${res.body}`,
        )
      }
    } else if (call.kind === 'credit') {
      if (res.statusCode !== 200)
        wrong.push(`good credit #${call.index} → ${res.statusCode} ${res.body}`)
    } else if (res.statusCode !== 201 || res.json().approved !== true) {
      wrong.push(`good authorization #${call.index} → ${res.statusCode} ${res.body}`)
    }
  })
  assert.deepEqual(wrong, [])

  const credited = credits.reduce((sum, c) => sum + c.amount, 0)
  const held = authorizations.reduce((sum, a) => sum + a, 0)
  assert.deepEqual(await balances(t, good.token, goodAccount), {
    ledger: FUNDS + credited,
    held,
    available: FUNDS + credited - held,
  })
  const goodEntries = await ledgerEntries(t, good.token, goodAccount)
  assert.equal(goodEntries.filter((e) => e.type === 'credit').length, 1 + credits.length)
  assert.equal(goodEntries.filter((e) => e.type === 'hold').length, authorizations.length)

  // Nothing of the refused requests was written: the bad organization's balances and entries are as before.
  assert.deepEqual(await balances(t, bad.token, bad.funded.account.id), {
    ledger: FUNDS,
    held: 0,
    available: FUNDS,
  })
  assert.equal((await ledgerEntries(t, bad.token, bad.funded.account.id)).length, 1)
  const accounts = (
    await t.api(bad.token, 'GET', `/v1/accounts?cardholder_id=${bad.funded.holder.id}`)
  ).json()
  assert.equal(accounts.data.length, 1, 'no account was opened with unstorable metadata')
  const auths = (
    await t.api(bad.token, 'GET', `/v1/authorizations?card_id=${bad.funded.card.id}&limit=100`)
  ).json()
  assert.equal(auths.data.length, 0, 'no authorization was recorded for the refused requests')
})

test('the same values are refused the same way one at a time (the answer does not depend on what shares the batch)', async () => {
  const holder = await approvedCardholder(t, bad.token)
  const res = await t.api(bad.token, 'POST', `/v1/accounts/${bad.funded.account.id}/credit`, {
    amount: 5,
    reference: 'x',
    description: `ok \uD83D\uDE00 then \uDE00`,
  })
  assert.equal(res.statusCode, 400, res.body)
  assert.equal(res.json().error.code, 'invalid_parameter')
  assert.equal(res.json().error.param, 'description')
  // A well-formed pair (an emoji) is ordinary text and is stored.
  const emoji = await t.api(bad.token, 'POST', `/v1/accounts/${bad.funded.account.id}/credit`, {
    amount: 5,
    description: 'thanks \uD83D\uDE00',
  })
  assert.equal(emoji.statusCode, 200, emoji.body)
  assert.equal(emoji.json().available_balance, FUNDS + 5)
  const opened = await t.api(bad.token, 'POST', '/v1/accounts', {
    program_id: bad.tenant.programs.full.id,
    cardholder_id: holder.id,
    currency: 'USD',
    metadata: { note: '\uD83D\uDE00' },
  })
  assert.equal(opened.statusCode, 201, opened.body)
})
