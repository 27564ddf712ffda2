import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ApiError } from '../../src/http/errors.js'
import type { Processor } from '../../src/processors/port.js'
import type { AccountRow } from '../../src/modules/accounts/index.js'
import type { CardholderRow } from '../../src/modules/cardholders/index.js'
import { checkIssuance, type IssuanceFacts } from '../../src/modules/cards/issuance-check.js'
import type { CardCreateBody } from '../../src/modules/cards/schemas.js'
import {
  emptySpendingControls,
  type SpendingControlsValue,
} from '../../src/modules/cards/spending-controls.js'
import type { ProgramRow } from '../../src/modules/programs/index.js'

/** The rules of POST /v1/cards without a database: facts in, the card's plan or the refusal out. */

const DELIVERY = {
  name: 'Ada Lovelace',
  line1: '1 Main St',
  city: 'Springfield',
  postal_code: '12345',
  country: 'usa',
}

function facts(overrides: Partial<IssuanceFacts> = {}): IssuanceFacts {
  const program = {
    id: 'prog_1',
    form_factors: ['virtual'],
    card_types: ['prepaid'],
    one_card_per_cardholder: false,
    card_brand: 'visa',
  } as unknown as ProgramRow
  const cardholder = {
    id: 'chd_1',
    identity_document_sealed: 'sealed',
    address: { line1: '1 Main St' },
  }
  const account = {
    id: 'acct_1',
    cardholder_id: 'chd_1',
    upstream_reference: 'up_1',
    program_id: 'prog_1',
  }
  const processor = {
    name: 'sim_basic',
    spendControls: { intervals: ['daily'], lists: ['blocked_mccs'] },
  }
  return {
    cardholder: cardholder as unknown as CardholderRow,
    kycRefusal: null,
    account: account as unknown as AccountRow,
    program,
    processor: processor as unknown as Processor,
    slotTaken: false,
    ...overrides,
  }
}

const body: CardCreateBody = {
  cardholder_id: 'chd_1',
  account_id: 'acct_1',
  form_factor: 'virtual',
  card_type: 'prepaid',
  embossed_name: ' ADA LOVELACE ',
  delivery_address: DELIVERY,
}

function refusal(f: IssuanceFacts, b = body, controls = emptySpendingControls()): string {
  const check = checkIssuance(f, b, controls)
  return check.ok
    ? 'issued'
    : `${check.error.code}${check.error.param ? ` (${check.error.param})` : ''}`
}

test('a card that passes every rule is planned with its account, program, processor, trimmed name and address', () => {
  const check = checkIssuance(facts(), body, emptySpendingControls())
  assert.ok(check.ok)
  assert.equal(check.plan.account.id, 'acct_1')
  assert.equal(check.plan.program.id, 'prog_1')
  assert.equal(check.plan.processor.name, 'sim_basic')
  assert.equal(check.plan.embossedName, 'ADA LOVELACE')
  assert.deepEqual(check.plan.deliveryAddress, {
    ...DELIVERY,
    line2: null,
    state: null,
    country: 'USA',
  })
  assert.equal(check.plan.holdsSlot, false)
})

test('refusals come in the stable order: each fact put right reveals the next rule', () => {
  const limited = { ...facts().program!, one_card_per_cardholder: true } as ProgramRow
  let f = facts({
    cardholder: {
      id: 'chd_1',
      identity_document_sealed: null,
      address: null,
    } as unknown as CardholderRow,
    kycRefusal: new ApiError('kyc_not_approved', { param: 'cardholder_id' }),
    account: new ApiError('account_not_found', { param: 'account_id' }),
    program: null,
    processor: null,
    slotTaken: true,
  })
  let b: CardCreateBody = {
    ...body,
    form_factor: 'physical',
    card_type: 'credit',
    embossed_name: undefined,
  }
  const controls: SpendingControlsValue = { ...emptySpendingControls(), allowed_countries: ['FRA'] }
  const seen: string[] = []
  const next = (fix: () => void) => {
    seen.push(refusal(f, b, controls))
    fix()
  }
  next(() => {
    f = { ...f, cardholder: { ...f.cardholder, identity_document_sealed: 'sealed' } }
  })
  next(() => {
    f = { ...f, cardholder: { ...f.cardholder, address: { line1: '1 Main St' } } as CardholderRow }
  })
  next(() => {
    f = { ...f, kycRefusal: null }
  })
  next(() => {
    f = { ...f, account: { ...(facts().account as AccountRow), cardholder_id: 'chd_2' } }
  })
  next(() => {
    f = { ...f, account: { ...(facts().account as AccountRow), upstream_reference: null } }
  })
  next(() => {
    f = { ...f, account: facts().account }
  })
  const unserved = new ApiError('program_not_provisioned', { param: 'program_id' })
  next(() => {
    f = { ...f, program: limited, processor: unserved }
  })
  next(() => {
    f = { ...f, processor: facts().processor }
  })
  next(() => {
    b = { ...b, form_factor: 'virtual' }
  })
  next(() => {
    b = { ...b, card_type: 'prepaid' }
  })
  next(() => {
    b = { ...b, embossed_name: 'ADA' }
  })
  next(() => {
    f = { ...f, slotTaken: false }
  })
  seen.push(refusal(f, b, controls))
  assert.deepEqual(seen, [
    'identity_document_required (cardholder_id)',
    'address_required (cardholder_id)',
    'kyc_not_approved (cardholder_id)',
    'account_not_found (account_id)',
    'account_cardholder_mismatch (account_id)',
    'account_not_provisioned (account_id)',
    'program_not_provisioned (account_id)',
    'program_not_provisioned (program_id)',
    'unsupported_form_factor (form_factor)',
    'card_type_not_configured (card_type)',
    'embossed_name_required (embossed_name)',
    'card_limit_reached (cardholder_id)',
    'spend_control_unsupported (spending_controls.allowed_countries)',
  ])
  assert.equal(refusal(f, b), 'issued')
})

test("a card on a one-card program holds the cardholder's slot; elsewhere a taken slot does not matter", () => {
  const limited = { ...facts().program!, one_card_per_cardholder: true } as ProgramRow
  const check = checkIssuance(facts({ program: limited }), body, emptySpendingControls())
  assert.ok(check.ok)
  assert.equal(check.plan.holdsSlot, true)
  assert.equal(refusal(facts({ slotTaken: true })), 'issued')
})
