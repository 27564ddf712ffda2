import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { decryptField, deriveKey, hmacSha256, sha256Hex } from '../../src/lib/crypto.js'
import { PROCESSOR_PROFILES } from '../../src/processors/catalog.js'
import {
  isProcessorError,
  type IssueCardInput,
  type Processor,
  type ProcessorScope,
} from '../../src/processors/port.js'
import {
  CARD_DATA_PURPOSES,
  secureRandomDigits,
  withLuhn,
  type RandomDigits,
} from '../../src/processors/sim-card-data.js'
import { SimulatedProcessor } from '../../src/processors/sim-processor.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
const scope: ProcessorScope = { organizationId: 'org_pan', environment: 'sandbox' }
let n = 0

before(async () => {
  t = await startTestApp()
})
after(async () => {
  await t.close()
})

const luhnValid = (pan: string) => /^[0-9]{16}$/.test(pan) && withLuhn(pan.slice(0, -1)) === pan
const cardInput = (bin: string, over: Partial<IssueCardInput> = {}): IssueCardInput => ({
  cardId: `card_PAN${++n}`,
  accountReference: 'sfa_x',
  programId: 'prog_x',
  cardholderId: 'chd_x',
  formFactor: 'virtual',
  cardType: 'debit',
  brand: 'visa',
  bin,
  embossedName: 'ADA LOVELACE',
  ...over,
})

/** A sim_full adapter drawing its digits from `random` (the app's own adapters use the CSPRNG). */
function simWith(random: RandomDigits): SimulatedProcessor {
  return new SimulatedProcessor(
    PROCESSOR_PROFILES.sim_full,
    {
      referencePrefix: 'sf',
      asyncAccounts: false,
      spendControls: { intervals: [], lists: [] },
    },
    { db: t.deps.db, clock: t.clock, masterKey: t.deps.config.masterKey, randomDigits: random },
  )
}

async function storedCard(cardId: string) {
  return t.deps.db
    .selectFrom('sim_processor_objects')
    .selectAll()
    .where('kind', '=', 'card')
    .where('key', '=', cardId)
    .executeTakeFirstOrThrow()
}

async function issue(processor: Processor, input: IssueCardInput) {
  const requested = await processor.issueCard(scope, input)
  const issued = await processor.getCard(scope, requested.upstreamReference)
  return { issued, details: await processor.revealDetails(scope, requested.upstreamReference) }
}

describe('simulated card numbers', () => {
  test('each processor issues 16-digit Luhn-valid numbers on the program BIN with a 3-digit CVC, and reveals the same values every time', async () => {
    for (const name of ['sim_full', 'sim_basic']) {
      const processor = t.deps.processors.forProgram({ id: 'prog_x', processor: name })
      const bin = PROCESSOR_PROFILES[name].bin
      const { issued, details } = await issue(processor, cardInput(bin))
      assert.ok(
        details.number.startsWith(bin),
        `${name}: ${details.number.slice(0, 8)} is not on ${bin}`,
      )
      assert.ok(luhnValid(details.number), `${name}: number fails Luhn`)
      assert.match(details.cvc, /^[0-9]{3}$/)
      assert.equal(details.number.slice(-4), issued.last4)
      assert.equal(details.expMonth, issued.expMonth)
      assert.equal(details.expYear, issued.expYear)
      assert.deepEqual(await processor.revealDetails(scope, issued.upstreamReference), details)
    }
  })

  test('the stored card holds neither PAN nor CVC in clear, only ciphertexts that decrypt to the revealed values and a keyed hash', async () => {
    const processor = t.deps.processors.forProgram({ id: 'prog_x', processor: 'sim_full' })
    const input = cardInput('42424200')
    const { details } = await issue(processor, input)
    const row = await storedCard(input.cardId)
    const masterKey = t.deps.config.masterKey
    const everything = JSON.stringify(row)
    assert.ok(!everything.includes(details.number), 'the PAN is in the row')
    assert.ok(
      !everything.includes(details.number.slice(0, 12)),
      'the first 12 digits are in the row',
    )
    assert.ok(!('cvc' in row.data) && !('pan' in row.data) && !('number' in row.data))
    assert.notEqual(row.cvc_encrypted, details.cvc)
    assert.ok(
      Buffer.from(row.cvc_encrypted!, 'base64').length > 3 + 16,
      'the CVC column is not an authenticated ciphertext',
    )
    assert.equal(
      decryptField(masterKey, CARD_DATA_PURPOSES.pan, row.pan_encrypted!),
      details.number,
    )
    assert.equal(decryptField(masterKey, CARD_DATA_PURPOSES.cvc, row.cvc_encrypted!), details.cvc)
    assert.notEqual(row.pan_hmac, sha256Hex(details.number), 'the index is a plain hash')
    assert.equal(
      row.pan_hmac,
      hmacSha256(deriveKey(masterKey, CARD_DATA_PURPOSES.panIndex), details.number).toString('hex'),
    )
  })

  test('a drawn number that another card holds is drawn again until it is free', async () => {
    const bin = '4242424242424' // 13 digits: 2 free digits, 100 numbers
    const panDraws = ['07', '07', '07', '42']
    const asked: number[] = []
    const processor = simWith((count) => {
      asked.push(count)
      return count === 3 ? '123' : panDraws.shift()!
    })
    const first = await issue(processor, cardInput(bin))
    const second = await issue(processor, cardInput(bin))
    assert.equal(first.details.number, withLuhn(`${bin}07`))
    assert.equal(second.details.number, withLuhn(`${bin}42`))
    assert.equal(panDraws.length, 0, 'the colliding draws were not retried')
    assert.deepEqual(asked, [3, 2, 3, 2, 2, 2])
  })

  test('2,000 cards on a BIN with only 10,000 numbers all get distinct valid numbers, collisions drawn again', async () => {
    const bin = '52525211111' // 11 digits: 4 free digits
    let panDraws = 0
    const processor = simWith((count) => {
      if (count === 4) panDraws++
      return secureRandomDigits(count)
    })
    const ids: string[] = []
    for (let batch = 0; batch < 100; batch++) {
      const inputs = Array.from({ length: 20 }, () => cardInput(bin))
      ids.push(...inputs.map((i) => i.cardId))
      await Promise.all(inputs.map((i) => processor.issueCard(scope, i)))
    }
    const rows = await t.deps.db
      .selectFrom('sim_processor_objects')
      .select(['pan_encrypted', 'pan_hmac'])
      .where('kind', '=', 'card')
      .where('key', 'in', ids)
      .execute()
    assert.equal(rows.length, 2000)
    const pans = rows.map((r) =>
      decryptField(t.deps.config.masterKey, CARD_DATA_PURPOSES.pan, r.pan_encrypted!),
    )
    assert.equal(new Set(pans).size, 2000, 'two cards share a number')
    assert.equal(new Set(rows.map((r) => r.pan_hmac)).size, 2000)
    for (const pan of pans)
      assert.ok(
        pan.startsWith(bin) && luhnValid(pan),
        `${pan.slice(0, 11)}… is not a valid number on the BIN`,
      )
    // About 200 collisions are expected (birthday bound); none at all would mean no retry ever happened.
    assert.ok(
      panDraws > 2000,
      `only ${panDraws} draws for 2,000 cards: no collision was drawn again`,
    )
  })

  test('a BIN with no free number left refuses the issuance as processor_unavailable instead of reusing a number', async () => {
    const bin = '424242424242421' // 15 digits: exactly one number
    const processor = simWith(secureRandomDigits)
    const { details } = await issue(processor, cardInput(bin))
    assert.equal(details.number, withLuhn(bin))
    await assert.rejects(
      processor.issueCard(scope, cardInput(bin)),
      (err: unknown) =>
        isProcessorError(err) &&
        err.failure === 'processor_unavailable' &&
        err.operation === 'issue_card',
    )
  })

  test('a retried issue_card, even concurrent, keeps the first number and code', async () => {
    const processor = t.deps.processors.forProgram({ id: 'prog_x', processor: 'sim_full' })
    const input = cardInput('42424200')
    const [a, b] = await Promise.all([
      processor.issueCard(scope, input),
      processor.issueCard(scope, input),
    ])
    assert.equal(a.upstreamReference, b.upstreamReference)
    const before = await storedCard(input.cardId)
    await processor.issueCard(scope, input)
    await processor.getCard(scope, a.upstreamReference)
    const after = await storedCard(input.cardId)
    assert.equal(after.pan_hmac, before.pan_hmac)
    assert.equal(after.cvc_encrypted, before.cvc_encrypted)
  })

  test('the PIN is kept only as a keyed hash, never as digits or a plain hash', async () => {
    const processor = t.deps.processors.forProgram({ id: 'prog_x', processor: 'sim_full' })
    const input = cardInput('42424200', { formFactor: 'physical' })
    const { issued } = await issue(processor, input)
    await processor.setPin(scope, issued.upstreamReference, '90817263')
    const row = await storedCard(input.cardId)
    const everything = JSON.stringify(row)
    assert.ok(!everything.includes('90817263'))
    assert.ok(!everything.includes(sha256Hex('90817263')))
    assert.match(String(row.data.pin_hash), /^[0-9a-f]{64}$/)
    assert.equal(await processor.verifyPin(scope, issued.upstreamReference, '90817263'), true)
  })
})
