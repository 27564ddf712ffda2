import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { describe, test } from 'node:test'
import { compactDecrypt } from 'jose'
import { PROCESSOR_NAMES, PROCESSORS } from '../../src/processors/catalog.js'
import type { ProcessorDefinition } from '../../src/processors/port.js'
import { createProcessorRegistry } from '../../src/processors/registry.js'
import { SimulatedProcessor } from '../../src/processors/sim-processor.js'
import { expectError } from '../helpers/api.js'
import { OPERATOR_TOKEN, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'

/**
 * The worked example of docs/architecture.md ("A processor"): a third processor is one object, and the
 * service serves it once it is in the list the runtime is built from. Here the list is the test's own
 * (`[...PROCESSORS, simTiny]`), so the service's `PROCESSORS` stays as it is.
 */
const simTiny: ProcessorDefinition = {
  profile: {
    name: 'sim_tiny',
    capabilities: ['account_credit', 'card_details'],
    formFactors: ['virtual'],
    cardTypes: ['prepaid'],
    cardBrand: 'visa',
    bin: '49990100',
    oneCardPerCardholder: false,
    identityEvidenceRequired: false,
    addressChangeRequiresKyc: false,
    kycInitialStatus: 'not_started',
  },
  spendControls: { intervals: ['daily'], lists: [] },
  simulatorFeeds: [],
  create: (deps) =>
    new SimulatedProcessor(
      simTiny.profile,
      { referencePrefix: 'st', asyncAccounts: false, spendControls: simTiny.spendControls },
      deps,
    ),
}

let t: TestApp
let tenant: TestClient
let token: string
let program: any
let account: any
let card: any
const callerKeys = generateKeyPairSync('rsa', { modulusLength: 2048 })

withTenant(
  async (fixture) => {
    ;({ t, tenant, token } = fixture)
    program = await t.operator('POST', '/operator/v1/programs', {
      organization_id: tenant.organizationId,
      environment: 'sandbox',
      name: 'Tiny',
      processor: 'sim_tiny',
      currencies: ['USD'],
    })
    const holder = await makeCardholder(t, token)
    account = await makeAccount(t, token, program.id, holder.id)
    card = await issuedCard(t, token, cardBody(holder.id, account.id))
  },
  { app: { processors: [...PROCESSORS, simTiny] } },
)

describe('a third processor, defined and listed by the test', () => {
  test('the operator binds a program to it, and the program inherits its traits', () => {
    assert.equal(program.processor, 'sim_tiny')
    assert.deepEqual(program.capabilities, ['account_credit', 'card_details'])
    assert.deepEqual(program.form_factors, ['virtual'])
    assert.deepEqual(program.card_types, ['prepaid'])
    assert.equal(program.card_brand, 'visa')
    assert.equal(program.kyc_initial_status, 'not_started')
  })

  test('a program may not widen what it issues', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/operator/v1/programs',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      payload: {
        organization_id: tenant.organizationId,
        environment: 'sandbox',
        name: 'Tiny plastic',
        processor: 'sim_tiny',
        currencies: ['USD'],
        form_factors: ['physical'],
      },
    })
    assert.equal(
      expectError(res, 400, 'invalid_parameter', 'form_factors').message,
      'sim_tiny issues only: virtual.',
    )
  })

  test('the service list is untouched: a runtime built without the option does not know sim_tiny', () => {
    assert.ok(!PROCESSOR_NAMES.includes('sim_tiny'))
    assert.deepEqual(t.deps.processors.names(), [...PROCESSOR_NAMES, 'sim_tiny'])
    const defaults = createProcessorRegistry({
      db: t.deps.db,
      clock: t.clock,
      masterKey: t.deps.config.masterKey,
    })
    assert.equal(defaults.has('sim_tiny'), false)
    assert.throws(
      () => defaults.forProgram(program),
      (err: any) => err.code === 'program_not_provisioned',
    )
  })

  test('a card is issued on it: active, with a number on its BIN, kept by its simulator', async () => {
    assert.equal(card.status, 'active')
    assert.equal(card.brand, 'visa')
    assert.equal(card.form_factor, 'virtual')
    const stored = await t.deps.db
      .selectFrom('sim_processor_objects')
      .select(['processor', 'reference'])
      .where('kind', '=', 'card')
      .where('key', '=', card.id)
      .executeTakeFirstOrThrow()
    assert.equal(stored.processor, 'sim_tiny')
    assert.match(stored.reference, /^stc_/)
  })

  test('capabilities it has work: credit, card details', async () => {
    const credited = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
      amount: 500,
    })
    assert.equal(credited.statusCode, 200, credited.body)
    assert.equal(credited.json().available_balance, 500)
    const res = await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
      public_key: callerKeys.publicKey.export({ format: 'jwk' }),
    })
    assert.equal(res.statusCode, 200, res.body)
    const { plaintext } = await compactDecrypt(res.json().encrypted_details, callerKeys.privateKey)
    const details = JSON.parse(new TextDecoder().decode(plaintext))
    assert.ok(details.number.startsWith('49990100'), details.number.slice(0, 8))
    assert.equal(details.number.slice(-4), card.last4)
  })

  test('capabilities it lacks answer what an unknown path answers: 404 not_found', async () => {
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${account.id}/debit`, { amount: 1 }),
      404,
      'not_found',
    )
    expectError(await t.api(token, 'POST', `/v1/accounts/${account.id}/block`), 404, 'not_found')
    expectError(await t.api(token, 'POST', `/v1/cards/${card.id}/pin-key`), 404, 'not_found')
  })

  test('what it cannot do upstream is refused with the usual 422s: form factor, spending controls, simulator feeds', async () => {
    const holder = await makeCardholder(t, token)
    const other = await makeAccount(t, token, program.id, holder.id)
    expectError(
      await t.api(
        token,
        'POST',
        '/v1/cards',
        cardBody(holder.id, other.id, { form_factor: 'physical' }),
      ),
      422,
      'unsupported_form_factor',
      'form_factor',
    )
    expectError(
      await t.api(
        token,
        'POST',
        '/v1/cards',
        cardBody(holder.id, other.id, {
          spending_controls: { spending_limits: [{ amount: 100, interval: 'weekly' }] },
        }),
      ),
      422,
      'spend_control_unsupported',
    )
    const daily = await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, other.id, {
        spending_controls: { spending_limits: [{ amount: 100, interval: 'daily' }] },
      }),
    )
    assert.equal(daily.statusCode, 201, daily.body)
    expectError(
      await t.api(token, 'POST', '/v1/simulate/network_tokens', {
        card_id: card.id,
        wallet: 'apple_pay',
      }),
      422,
      'operation_unsupported',
    )
  })
})
