import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setFault } from '../../src/processors/faults.js'
import { isProcessorError, type Processor, type ProcessorScope } from '../../src/processors/port.js'
import { withLuhn } from '../../src/processors/sim-processor.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let full: Processor
let basic: Processor
const scope: ProcessorScope = { organizationId: 'org_sim', environment: 'sandbox' }
let n = 0

before(async () => {
  t = await startTestApp()
  full = t.deps.processors.forProgram({ id: 'prog_x', processor: 'sim_full' })
  basic = t.deps.processors.forProgram({ id: 'prog_y', processor: 'sim_basic' })
})
after(async () => {
  await t.close()
})

const luhnValid = (pan: string) => withLuhn(pan.slice(0, -1)) === pan
const cardInput = (formFactor: 'virtual' | 'physical') => ({
  cardId: `card_T${++n}`,
  accountReference: 'sfa_x',
  programId: 'prog_x',
  cardholderId: 'chd_x',
  formFactor,
  cardType: 'debit',
  brand: 'visa',
  bin: '42424200',
  embossedName: 'ADA LOVELACE',
})

async function rejectsWith(p: Promise<unknown>, failure: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => isProcessorError(err) && err.failure === failure)
}

describe('simulated processors', () => {
  test('sim_full opens an account at once and answers the same reference when retried with the same id', async () => {
    const a = await full.createAccount(scope, {
      accountId: 'acct_sim1',
      programId: 'prog_x',
      cardholderId: 'chd_x',
      currency: 'USD',
    })
    assert.match(a.upstreamReference ?? '', /^sfa_/)
    const again = await full.createAccount(scope, {
      accountId: 'acct_sim1',
      programId: 'prog_x',
      cardholderId: 'chd_x',
      currency: 'USD',
    })
    assert.equal(again.upstreamReference, a.upstreamReference)
  })

  test('sim_basic creates accounts asynchronously: no reference at first, one when looked up later', async () => {
    const a = await basic.createAccount(scope, {
      accountId: 'acct_sim2',
      programId: 'prog_y',
      cardholderId: 'chd_x',
      currency: 'USD',
    })
    assert.equal(a.upstreamReference, null)
    const later = await basic.getAccount(scope, 'acct_sim2')
    assert.match(later.upstreamReference ?? '', /^sba_/)
  })

  test('a card is pending until looked up, then issued: virtual active, physical inactive, with a Luhn-valid number on the BIN', async () => {
    const virtual = await full.issueCard(scope, cardInput('virtual'))
    assert.equal(virtual.status, 'pending')
    assert.equal(virtual.last4, null)
    const issued = await full.getCard(scope, virtual.upstreamReference)
    assert.equal(issued.status, 'active')
    const details = await full.revealDetails(scope, virtual.upstreamReference)
    assert.equal(details.number.length, 16)
    assert.ok(details.number.startsWith('42424200'))
    assert.ok(luhnValid(details.number))
    assert.equal(details.number.slice(-4), issued.last4)
    assert.match(details.cvc, /^\d{3}$/)
    assert.equal(details.expYear, issued.expYear)
    const physical = await full.issueCard(scope, cardInput('physical'))
    assert.equal((await full.getCard(scope, physical.upstreamReference)).status, 'inactive')
  })

  test('status changes stick, and a closed card cannot be reopened at the processor', async () => {
    const card = await full.issueCard(scope, cardInput('virtual'))
    await full.getCard(scope, card.upstreamReference)
    assert.equal(
      (await full.setCardStatus(scope, card.upstreamReference, 'frozen')).status,
      'frozen',
    )
    assert.equal(
      (await full.setCardStatus(scope, card.upstreamReference, 'closed')).status,
      'closed',
    )
    await rejectsWith(
      full.setCardStatus(scope, card.upstreamReference, 'active'),
      'processor_permission_denied',
    )
  })

  test('a PIN set on sim_full verifies; a wrong PIN does not; sim_basic takes no PIN', async () => {
    const card = await full.issueCard(scope, cardInput('physical'))
    await full.getCard(scope, card.upstreamReference)
    await full.setPin(scope, card.upstreamReference, '4821')
    assert.equal(await full.verifyPin(scope, card.upstreamReference, '4821'), true)
    assert.equal(await full.verifyPin(scope, card.upstreamReference, '4822'), false)
    await rejectsWith(basic.setPin(scope, card.upstreamReference, '4821'), 'operation_unsupported')
  })

  test('sim_full blocks and reopens an account it knows; sim_basic has no account status operation', async () => {
    await full.createAccount(scope, {
      accountId: 'acct_sim4',
      programId: 'prog_x',
      cardholderId: 'chd_x',
      currency: 'USD',
    })
    await full.setAccountStatus(scope, 'acct_sim4', 'blocked')
    const stored = await t.deps.db
      .selectFrom('sim_processor_objects')
      .select(['state', 'data'])
      .where('processor', '=', 'sim_full')
      .where('kind', '=', 'account')
      .where('key', '=', 'acct_sim4')
      .executeTakeFirstOrThrow()
    assert.equal(stored.state, 'open')
    assert.equal((stored.data as Record<string, unknown>).status, 'blocked')
    await full.setAccountStatus(scope, 'acct_sim4', 'open')
    await rejectsWith(
      full.setAccountStatus(scope, 'acct_unknown', 'blocked'),
      'processor_permission_denied',
    )
    await basic.createAccount(scope, {
      accountId: 'acct_sim5',
      programId: 'prog_y',
      cardholderId: 'chd_x',
      currency: 'USD',
    })
    await rejectsWith(
      basic.setAccountStatus(scope, 'acct_sim5', 'blocked'),
      'operation_unsupported',
    )
  })

  test('sim_basic issues no physical cards', async () => {
    await rejectsWith(basic.issueCard(scope, cardInput('physical')), 'operation_unsupported')
  })

  test('an injected fault fails exactly the next N calls of that operation, then clears', async () => {
    await setFault(t.deps.db, scope, 'issue_card', 'processor_unavailable', 2, t.clock.now())
    await rejectsWith(full.issueCard(scope, cardInput('virtual')), 'processor_unavailable')
    await rejectsWith(basic.issueCard(scope, cardInput('virtual')), 'processor_unavailable')
    assert.equal((await full.issueCard(scope, cardInput('virtual'))).status, 'pending')
    await full.createAccount(scope, {
      accountId: 'acct_sim3',
      programId: 'prog_x',
      cardholderId: 'chd_x',
      currency: 'USD',
    })
  })

  test('a program bound to a processor this deployment lacks is program_not_provisioned', () => {
    assert.throws(
      () => t.deps.processors.forProgram({ id: 'prog_z', processor: 'acme_bank' }),
      (err: any) => err.code === 'program_not_provisioned',
    )
  })
})
