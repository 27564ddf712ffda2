import assert from 'node:assert/strict'
import { createPrivateKey } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import {
  Svc,
  SvcAuthenticationError,
  SvcError,
  SvcInvalidRequestError,
  SvcValidationError,
} from '../../sdk/src/index.js'
import type { TestApp } from '../helpers/app.js'
import {
  ADDRESS,
  DELIVERY,
  MERCHANT,
  sdkTenant,
  startListeningApp,
  uniqueEmail,
  type SdkTenant,
} from './support.js'

// The SDK against the real application on a real port: every call below goes through @svc/sdk only.
let t: TestApp
let baseUrl: string
let tenant: SdkTenant
let svc: Svc

before(async () => {
  ;({ t, baseUrl } = await startListeningApp())
  tenant = await sdkTenant(t, baseUrl)
  svc = tenant.svc()
})
after(() => t.close())

const drain = () => new JobRunner(t.deps, t.jobs, { listen: false }).drain()

describe('a card story through the SDK', () => {
  test('cardholder, KYC, account, credit, virtual card active once issued, an authorization captured, the card frozen and closed', async () => {
    const cardholder = await svc.cardholders.create({
      type: 'individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: uniqueEmail('card'),
      address: ADDRESS,
      identity_document: { type: 'passport', number: 'P1000111' },
    })
    assert.match(cardholder.id, /^chd_/)
    assert.equal(cardholder.lastResponse?.status, 201)
    assert.match(cardholder.lastResponse!.requestId!, /^req_/)
    assert.deepEqual(
      Object.keys(cardholder).includes('lastResponse'),
      false,
      'lastResponse is not enumerable',
    )

    await svc.kyc.create(cardholder.id, {
      status: 'approved',
      provider: 'acme-kyc',
      verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
      identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' },
    })
    assert.equal((await svc.cardholders.retrieve(cardholder.id)).kyc_status, 'approved')
    const updated = await svc.cardholders.update(cardholder.id, { metadata: { crm: '42' } })
    assert.deepEqual(updated.metadata, { crm: '42' })

    const account = await svc.accounts.create({
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    const credited = await svc.accounts.credit(account.id, {
      amount: 10_000,
      description: 'top-up',
    })
    assert.equal(credited.available_balance, 10_000)
    const entries = await svc.accounts.listEntries(account.id).toArray()
    assert.equal(entries.length, 1)

    const card = await svc.cards.create({
      cardholder_id: cardholder.id,
      account_id: account.id,
      form_factor: 'virtual',
      card_type: 'prepaid',
      embossed_name: 'ADA LOVELACE',
      delivery_address: DELIVERY,
    })
    const issued = await svc.simulate.cards.issue(card.id)
    assert.equal(issued.status, 'active', 'a virtual card is active once issued')
    await assert.rejects(
      svc.cards.activate(card.id),
      (err: unknown) => err instanceof SvcValidationError && err.code === 'card_already_activated',
    )

    const authorization = await svc.simulate.authorizations.create({
      card_id: card.id,
      amount: 2_500,
      currency: 'USD',
      merchant: MERCHANT,
    })
    assert.equal(authorization.approved, true)
    assert.equal((await svc.authorizations.retrieve(authorization.id)).status, 'pending')
    const capture = await svc.simulate.authorizations.capture(authorization.id)
    assert.equal(capture.amount, 2_500)
    const transactions = await svc.transactions.list({ card_id: card.id }).toArray()
    assert.deepEqual(
      transactions.map((x) => x.id),
      [capture.id],
    )
    assert.equal((await svc.accounts.retrieve(account.id)).available_balance, 7_500)

    // A hosted card details page: the SDK sends the request with an Idempotency-Key and answers the session.
    const reveal = await svc.cards.createRevealSession(card.id, {
      target_origin: 'https://app.example.com',
      fields: ['number', 'expiry'],
      expires_in: 120,
    })
    assert.match(reveal.id, /^crs_/)
    assert.match(reveal.url, /\/card-reveal\/[A-Za-z0-9_-]{43}$/)
    assert.deepEqual(reveal.fields, ['number', 'expiry'])
    assert.equal(reveal.lastResponse?.status, 201)
    assert.ok(reveal.lastResponse?.idempotencyKey)

    assert.equal((await svc.cards.freeze(card.id)).status, 'frozen')
    const declined = await svc.simulate.authorizations.create({
      card_id: card.id,
      amount: 100,
      currency: 'USD',
      merchant: MERCHANT,
    })
    assert.equal(declined.approved, false)
    assert.equal((await svc.cards.close(card.id)).status, 'closed')

    const types = (await svc.events.list({ type: 'card.*' }).toArray()).map((e) => e.type)
    for (const type of ['card.created', 'card.issued', 'card.frozen', 'card.closed'])
      assert.ok(types.includes(type as never), `${type} missing`)
  })

  test('refusals are typed errors carrying type, code, param, requestId, status and headers', async () => {
    const cardholder = await svc.cardholders.create({
      type: 'individual',
      first_name: 'Bo',
      last_name: 'Poor',
      email: uniqueEmail('poor'),
      address: ADDRESS,
    })
    await svc.kyc.create(cardholder.id, {
      status: 'approved',
      provider: 'acme-kyc',
      verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
    })
    const account = await svc.accounts.create({
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    await assert.rejects(svc.accounts.debit(account.id, { amount: 500 }), (err: unknown) => {
      assert.ok(err instanceof SvcValidationError)
      assert.ok(err instanceof SvcError)
      assert.equal(err.type, 'validation_error')
      assert.equal(err.code, 'insufficient_funds')
      assert.equal(err.status, 402)
      assert.match(err.requestId!, /^req_/)
      assert.equal(err.headers['svc-request-id'], err.requestId)
      return true
    })
    await assert.rejects(svc.cards.retrieve('card_00000000000000000000000000'), (err: unknown) => {
      assert.ok(err instanceof SvcInvalidRequestError)
      assert.equal(err.code, 'card_not_found')
      assert.equal(err.status, 404)
      return true
    })
    await assert.rejects(
      svc.cardholders.create({
        type: 'individual',
        first_name: 'X',
        last_name: 'Y',
        email: 'not-an-email',
      } as never),
      (err: unknown) => {
        assert.ok(err instanceof SvcInvalidRequestError)
        assert.equal(err.param, 'email')
        return true
      },
    )
  })

  test('a client the service does not know gets SvcAuthenticationError from the token endpoint', async () => {
    const stranger = new Svc({
      clientId: 'oc_00000000000000000000000000',
      privateKey: tenant.privateJwk,
      baseUrl,
    })
    await assert.rejects(stranger.programs.list().firstPage(), (err: unknown) => {
      assert.ok(err instanceof SvcAuthenticationError)
      assert.equal(err.code, 'invalid_client')
      assert.equal(err.status, 401)
      return true
    })
  })

  test('an RS256 client with a PEM key works as an ES256 client with a JWK does', async () => {
    const rsa = await sdkTenant(t, baseUrl, 'RS256')
    const pem = createPrivateKey({ key: rsa.privateJwk as never, format: 'jwk' }).export({
      type: 'pkcs8',
      format: 'pem',
    }) as string
    const client = rsa.svc({ privateKey: pem, keyId: 'k1' })
    const programs = await client.programs.list().toArray()
    assert.equal(programs.length, 2)
  })
})

describe('rates and deliveries through the SDK', () => {
  test('a rate pinned for the sandbox reads back pinned; an event lists its deliveries', async () => {
    const table = await svc.fxRates.retrieve({ base: 'EUR', quote: 'USD' })
    assert.deepEqual(
      [table.object, table.base, table.quote, table.pinned],
      ['fx_rate', 'EUR', 'USD', false],
    )
    const pinned = await svc.simulate.fxRates.pin('EUR', 'USD', { rate: '1.2345' })
    assert.deepEqual([pinned.rate, pinned.pinned], ['1.2345', true])
    const read = await svc.fxRates.retrieve({ base: 'eur', quote: 'usd' })
    assert.deepEqual([read.rate, read.pinned, read.source], ['1.2345', true, 'sandbox'])
    const [event] = await svc.events.list({ limit: 1 }).toArray()
    assert.ok(event, 'the story above emitted events')
    assert.deepEqual(await svc.events.listDeliveries(event.id).toArray(), [])
  })
})

describe('an eSIM story through the SDK', () => {
  test('the catalogue, an order provisioning an eSIM, the eSIM and its top-ups, an H5 link', async () => {
    await svc.simulate.esim.provisioning({ latency_ms: 0 })
    const cardholder = await svc.cardholders.create({
      type: 'individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: uniqueEmail('esim'),
      address: { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FRA' },
    })
    const packages = await svc.esim.packages.list({ country: 'FRA', status: 'on_sale' }).toArray()
    const pkg = packages.find((p) => p.data_mb !== null)
    assert.ok(pkg, 'a French package on sale')
    assert.equal((await svc.esim.packages.retrieve(pkg.id)).id, pkg.id)
    const reference = `sdk-${Date.now()}`
    const order = await svc.esim.orders.create({
      package_id: pkg.id,
      reference,
      cardholder_id: cardholder.id,
    })
    await drain()
    const settled = await svc.esim.orders.retrieve(order.id)
    assert.equal(settled.status, 'completed')
    const listed = await svc.esim.orders.list({ reference }).toArray()
    assert.deepEqual(
      listed.map((o) => o.id),
      [order.id],
    )
    const esims = await svc.esim.esims.list({ cardholder_id: cardholder.id }).toArray()
    assert.equal(esims.length, 1)
    const esim = await svc.esim.esims.retrieve(esims[0].id)
    assert.equal(esim.id, esims[0].id)
    const offers = await svc.esim.topUps.list(esim.id).toArray()
    assert.ok(Array.isArray(offers))
    const link = await svc.esim.h5Links.create({ cardholder_id: cardholder.id })
    assert.match(link.url, /^http/)
    assert.deepEqual(link.sections, ['esims'])
    const traveller = await svc.esim.h5Links.create({
      cardholder_id: cardholder.id,
      sections: ['esims', 'cards', 'balance'],
    })
    assert.deepEqual(traveller.sections, ['esims', 'cards', 'balance'])
    assert.equal(traveller.pay_from_account_id, null)
  })
})
