import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { crossRate, parseRate } from '../../src/lib/fx.js'
import { SANDBOX_UNITS_PER_USD, sandboxTableRate } from '../../src/processors/sandbox-fx-table.js'
import { expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'

/** The sandbox rate table through the API: reading a rate, pinning one, and the simulated processors converting at it. */

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const rateOf = (base: string, quote: string, bearer = token) =>
  t.api(bearer, 'GET', `/v1/fx_rates?base=${base}&quote=${quote}`)
const pin = (base: string, quote: string, body: unknown, bearer = token) =>
  t.api(bearer, 'PUT', `/v1/simulate/fx_rates/${base}/${quote}`, body)

/** A time the answer's rate_at must lie within: between just before and just after the call. */
async function timed<T>(call: () => Promise<T>): Promise<{ result: T; from: number; to: number }> {
  const from = t.clock.now().getTime()
  const result = await call()
  return { result, from, to: t.clock.now().getTime() }
}

describe('GET /v1/fx_rates', () => {
  test("answers the table's rate as an fx_rate object, quote per base, crossed through the dollar", async () => {
    const { result: res, from, to } = await timed(() => rateOf('EUR', 'USD'))
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.deepEqual(Object.keys(body).sort(), [
      'base',
      'object',
      'pinned',
      'quote',
      'rate',
      'rate_at',
      'source',
    ])
    assert.deepEqual(
      { ...body, rate_at: undefined },
      {
        object: 'fx_rate',
        base: 'EUR',
        quote: 'USD',
        rate: '1.08695652174',
        source: 'sandbox',
        pinned: false,
        rate_at: undefined,
      },
    )
    const at = Date.parse(body.rate_at)
    assert.ok(at >= from && at <= to, "the table's rate is as of the request")
    assert.equal(
      (await rateOf('usd', 'jpy')).json().rate,
      '151.5',
      'either case, answered upper-cased',
    )
    assert.deepEqual(
      [(await rateOf('JPY', 'BHD')).json().rate, (await rateOf('KWD', 'JPY')).json().rate],
      [crossRate('151.5', '0.376'), crossRate('0.3075', '151.5')],
    )
  })

  test('refuses a currency the service does not know, the same currency twice, and a missing or unknown parameter', async () => {
    expectError(await rateOf('XXX', 'USD'), 400, 'invalid_parameter', 'base')
    expectError(await rateOf('USD', 'ZZZ'), 400, 'invalid_parameter', 'quote')
    expectError(await rateOf('HRK', 'EUR'), 400, 'invalid_parameter', 'base')
    expectError(await rateOf('EURO', 'USD'), 400, 'invalid_parameter', 'base')
    const same = expectError(await rateOf('USD', 'usd'), 400, 'invalid_parameter', 'quote')
    assert.match(same.message, /another currency than base/)
    expectError(
      await t.api(token, 'GET', '/v1/fx_rates?base=USD'),
      400,
      'missing_parameter',
      'quote',
    )
    expectError(
      await t.api(token, 'GET', '/v1/fx_rates?base=USD&quote=EUR&at=now'),
      400,
      'unknown_parameter',
      'at',
    )
  })

  test('needs transactions:read', async () => {
    expectError(
      await rateOf('EUR', 'USD', await tenant.token('cards:read accounts:read')),
      403,
      'insufficient_scope',
    )
    assert.equal(
      (await rateOf('EUR', 'USD', await tenant.token('transactions:read'))).statusCode,
      200,
    )
  })

  test('answers the table in production too, where nothing can be pinned', async () => {
    const live = await createTenant(t, {
      organizationId: tenant.organizationId,
      environment: 'production',
    })
    const liveToken = await live.token()
    const res = await rateOf('GBP', 'EUR', liveToken)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([res.json().rate, res.json().pinned], [sandboxTableRate('GBP', 'EUR'), false])
    expectError(await pin('GBP', 'EUR', { rate: '1.2' }, liveToken), 404, 'not_found')
  })
})

describe('PUT /v1/simulate/fx_rates/{base}/{quote}', () => {
  test("pins one direction for the calling organization's sandbox; pinning again replaces it", async () => {
    const { result: res, from, to } = await timed(() => pin('CHF', 'SEK', { rate: '012.3450' }))
    assert.equal(res.statusCode, 200, res.body)
    const pinned = res.json()
    assert.deepEqual(
      { ...pinned, rate_at: undefined },
      {
        object: 'fx_rate',
        base: 'CHF',
        quote: 'SEK',
        rate: '12.345',
        source: 'sandbox',
        pinned: true,
        rate_at: undefined,
      },
    )
    const pinnedAt = Date.parse(pinned.rate_at)
    assert.ok(pinnedAt >= from && pinnedAt <= to)
    t.clock.advance(60_000)
    assert.deepEqual(
      (await rateOf('chf', 'sek')).json(),
      pinned,
      'GET answers the pin, with the time it was pinned',
    )
    assert.deepEqual(
      [(await rateOf('SEK', 'CHF')).json().rate, (await rateOf('SEK', 'CHF')).json().pinned],
      [sandboxTableRate('SEK', 'CHF'), false],
      "the other direction keeps the table's",
    )

    const again = (await pin('chf', 'sek', { rate: '12.5' })).json()
    assert.deepEqual([again.base, again.quote, again.rate], ['CHF', 'SEK', '12.5'])
    assert.ok(Date.parse(again.rate_at) >= pinnedAt + 60_000)
    assert.deepEqual((await rateOf('CHF', 'SEK')).json(), again)
  })

  test("is the organization's own: another organization and the production environment keep the table", async () => {
    assert.equal((await pin('NOK', 'DKK', { rate: '0.5' })).statusCode, 200)
    const other = await createTenant(t)
    const theirs = (await rateOf('NOK', 'DKK', await other.token())).json()
    assert.deepEqual([theirs.rate, theirs.pinned], [sandboxTableRate('NOK', 'DKK'), false])
    const live = await createTenant(t, {
      organizationId: tenant.organizationId,
      environment: 'production',
    })
    assert.equal((await rateOf('NOK', 'DKK', await live.token())).json().pinned, false)
  })

  test('refuses a rate that is zero, negative, not a decimal string or too precise, naming rate', async () => {
    for (const rate of [
      '0',
      '0.000',
      '-1.2',
      '+1.2',
      '1e3',
      '1.',
      '.5',
      '1,5',
      ' 1.5',
      'abc',
      '',
      '1234567890123',
      '0.0000000000000000001',
      1.5,
      0,
      null,
      true,
    ]) {
      expectError(await pin('EUR', 'USD', { rate }), 400, 'invalid_parameter', 'rate')
    }
    expectError(
      await pin('EUR', 'USD', { rate: `1.${'5'.repeat(40)}` }),
      400,
      'invalid_parameter',
      'rate',
    )
    expectError(await pin('EUR', 'USD', {}), 400, 'missing_parameter', 'rate')
    expectError(
      await pin('EUR', 'USD', { rate: '1.1', expires_at: 'never' }),
      400,
      'unknown_parameter',
      'expires_at',
    )
    assert.equal((await rateOf('EUR', 'USD')).json().pinned, false, 'nothing was pinned')
  })

  test('refuses a currency the service does not know and the same currency twice, naming it', async () => {
    expectError(await pin('XXX', 'USD', { rate: '1' }), 400, 'invalid_parameter', 'base')
    expectError(await pin('USD', 'XAU', { rate: '1' }), 400, 'invalid_parameter', 'quote')
    expectError(await pin('EURO', 'USD', { rate: '1' }), 400, 'invalid_parameter', 'base')
    expectError(await pin('USD', 'usd', { rate: '1' }), 400, 'invalid_parameter', 'quote')
  })

  test('needs transactions:write', async () => {
    expectError(
      await pin('EUR', 'USD', { rate: '1.1' }, await tenant.token('transactions:read')),
      403,
      'insufficient_scope',
    )
  })
})

describe("the simulated processors' rate (the port's fxRate)", () => {
  test("is the organization's pinned rate first, else the table's as of the time asked, both from the sandbox", async () => {
    assert.equal((await pin('MXN', 'CAD', { rate: '0.0712' })).statusCode, 200)
    const at = new Date('2026-11-20T09:30:00.000Z')
    const scope = { organizationId: tenant.organizationId, environment: 'sandbox' }
    for (const program of [tenant.programs.full, tenant.programs.basic]) {
      const processor = t.deps.processors.forProgram(program)
      const pinned = await processor.fxRate(scope, 'MXN', 'CAD', at)
      assert.equal(pinned.rate, '0.0712', program.processor)
      assert.equal(pinned.source, 'sandbox')
      assert.ok(
        pinned.rateAt.getTime() <= t.clock.now().getTime() &&
          pinned.rateAt.getTime() !== at.getTime(),
        'when it was pinned',
      )
      assert.deepEqual(await processor.fxRate(scope, 'CAD', 'MXN', at), {
        rate: sandboxTableRate('CAD', 'MXN'),
        source: 'sandbox',
        rateAt: at,
      })
      const stranger = {
        organizationId: (await createTenant(t)).organizationId,
        environment: 'sandbox',
      }
      assert.equal(
        (await processor.fxRate(stranger, 'MXN', 'CAD', at)).rate,
        sandboxTableRate('MXN', 'CAD'),
      )
    }
  })
})

describe('the sandbox rate table', () => {
  test('has a valid rate for every currency the service knows, and nothing else', async () => {
    const { CURRENCIES } = await import('../../src/lib/currencies.js')
    assert.deepEqual(Object.keys(SANDBOX_UNITS_PER_USD).sort(), [...CURRENCIES])
    for (const [code, rate] of Object.entries(SANDBOX_UNITS_PER_USD))
      assert.doesNotThrow(() => parseRate(rate), code)
    assert.equal(SANDBOX_UNITS_PER_USD.USD, '1')
  })

  test('crosses every pair into a valid rate whose inverse agrees to 11 digits', () => {
    const codes = Object.keys(SANDBOX_UNITS_PER_USD)
    for (const base of codes) {
      for (const quote of codes) {
        const there = parseRate(sandboxTableRate(base, quote))
        const back = parseRate(sandboxTableRate(quote, base))
        // there × back = 1 within 2 × 10^-11 (each is rounded to 12 significant digits).
        const product = there.units * back.units
        const one = 10n ** BigInt(there.scale + back.scale)
        const diff = product > one ? product - one : one - product
        assert.ok(
          diff * 50_000_000_000n <= one,
          `${base}/${quote}: ${sandboxTableRate(base, quote)} × ${sandboxTableRate(quote, base)}`,
        )
      }
    }
  })

  test('is realistic: pegs at their pegged values, majors where the market keeps them', () => {
    const near = (base: string, quote: string, expected: number, tolerance: number) => {
      const rate = Number(sandboxTableRate(base, quote))
      assert.ok(
        Math.abs(rate / expected - 1) <= tolerance,
        `${base}/${quote} = ${rate}, expected about ${expected}`,
      )
    }
    near('USD', 'AED', 3.6725, 0)
    near('USD', 'SAR', 3.75, 0)
    near('BHD', 'USD', 2.659574, 0.000001)
    near('EUR', 'XOF', 655.957, 0.001)
    near('EUR', 'XAF', 655.957, 0.001)
    near('EUR', 'BGN', 1.95583, 0.001)
    near('EUR', 'DKK', 7.46, 0.005)
    near('GBP', 'GIP', 1, 0)
    near('ZAR', 'NAD', 1, 0)
    near('USD', 'HKD', 7.8, 0.005)
    for (const [code, perUsd] of [
      ['EUR', 0.92],
      ['GBP', 0.79],
      ['JPY', 150],
      ['CHF', 0.88],
      ['CNY', 7.2],
      ['INR', 84],
      ['KWD', 0.307],
    ] as const) {
      near('USD', code, perUsd, 0.1)
    }
    assert.equal(sandboxTableRate('USD', 'USD'), '1')
  })
})
