// `npm run bench -- clocks`: advancing a sandbox clock that holds many objects, and what it costs the requests of
// another organization served beside it. One clock holds `--cardholders` (100) cardholders with one funded account
// each, `--cards` (1,000) cards, `--authorizations` (10,000) pending authorizations (10 per card, made through the API:
// real holds, ledger entries and events) and `--esims` (1,000) eSIMs (written in SQL: no network involved). Then, in
// one process on a PostgreSQL database of its own (the app the tests boot):
//   1. a load of another organization without clocks alone for `--seconds` (the baseline): paced requests, half
//      `GET /v1/cards/{id}`, half `POST /v1/simulate/authorizations`, at `--rate` a second;
//   2. the same load while `POST /v1/simulate/clocks/{id}/advance {by: P30D}` runs (every hold expires);
// and prints the advance's time (target < 30 s) and the load's p50/p99 in both phases (target: p99 within +20 %).
//
//   npm run bench -- clocks [--cardholders 100] [--cards 1000] [--authorizations 10000] [--esims 1000]
//                           [--rate 100] [--seconds 20]
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import { newId } from '../src/lib/ids.js'
import { createTenant, startTestApp, type TestApp } from '../test/helpers/app.js'
import { ok } from './authorizations-engine-harness.js'
import { benchDatabaseUrl } from './platform-harness.js'

const { values } = parseArgs({
  options: {
    cardholders: { type: 'string', default: '100' },
    cards: { type: 'string', default: '1000' },
    authorizations: { type: 'string', default: '10000' },
    esims: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '20' },
  },
})
const N = {
  cardholders: Number(values.cardholders),
  cards: Number(values.cards),
  authorizations: Number(values.authorizations),
  esims: Number(values.esims),
}
const rate = Number(values.rate)
const seconds = Number(values.seconds)
const log = (line: string) => process.stdout.write(`${line}\n`)
const DAY_MS = 86_400_000
const ADDRESS = { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' }
const MERCHANT = { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' }

/** Runs `work` over `items`, `width` at a time. */
async function pool<T>(
  items: readonly T[],
  width: number,
  work: (item: T, i: number) => Promise<void>,
) {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++
        await work(items[i]!, i)
      }
    }),
  )
}

let emails = 0
async function cardholder(t: TestApp, token: string, clockId: string | null) {
  const holder = await ok(t, token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Bench',
    last_name: 'Clock',
    email: `bench.clock.${++emails}.${Date.now()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: `P${emails}` },
    ...(clockId ? { clock_id: clockId } : {}),
  })
  await ok(t, token, 'POST', `/v1/cardholders/${holder.id}/kyc`, {
    status: 'approved',
    provider: 'bench',
    verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
  })
  return holder
}

async function fundedAccount(t: TestApp, token: string, programId: string, holderId: string) {
  const account = await ok(t, token, 'POST', '/v1/accounts', {
    program_id: programId,
    cardholder_id: holderId,
    currency: 'USD',
  })
  await ok(t, token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 100_000_000 })
  return account
}

async function activeCard(t: TestApp, token: string, holderId: string, accountId: string) {
  const card = await ok(t, token, 'POST', '/v1/cards', {
    cardholder_id: holderId,
    account_id: accountId,
    form_factor: 'virtual',
    card_type: 'prepaid',
    embossed_name: 'BENCH CLOCK',
    delivery_address: { name: 'Bench', ...ADDRESS },
  })
  await ok(t, token, 'POST', `/v1/simulate/cards/${card.id}/issue`)
  return card
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 10) / 10
}

interface LoadFigures {
  requests: number
  errors: number
  p50: number
  p99: number
  max: number
}

/** Paced requests of the other organization until `stop()` resolves: their latencies. */
async function load(
  t: TestApp,
  token: string,
  cards: string[],
  until: Promise<unknown>,
): Promise<LoadFigures> {
  const latencies: number[] = []
  let errors = 0
  let done = false
  void until.then(() => {
    done = true
  })
  const inFlight: Promise<void>[] = []
  const gap = 1000 / rate
  const start = performance.now()
  for (let i = 0; !done; i++) {
    const due = start + i * gap
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    if (done) break
    const card = cards[i % cards.length]!
    const sent = performance.now()
    const call =
      i % 2 === 0
        ? t.api(token, 'GET', `/v1/cards/${card}`)
        : t.api(token, 'POST', '/v1/simulate/authorizations', {
            card_id: card,
            amount: 100,
            currency: 'USD',
            merchant: MERCHANT,
          })
    inFlight.push(
      call.then((res) => {
        latencies.push(performance.now() - sent)
        if (res.statusCode >= 300) errors++
      }),
    )
  }
  await Promise.all(inFlight)
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    errors,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: percentile(latencies, 1),
  }
}

process.env.DATABASE_URL = benchDatabaseUrl()
const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } })
try {
  const seeding = performance.now()
  const tenant = await createTenant(t)
  const token = await tenant.token()
  const program = tenant.programs.full.id
  const clock = await ok(t, token, 'POST', '/v1/simulate/clocks', { name: 'bench' })

  const holders: { id: string; account: string }[] = []
  await pool(
    Array.from({ length: N.cardholders }, (_, i) => i),
    8,
    async () => {
      const h = await cardholder(t, token, clock.id)
      const account = await fundedAccount(t, token, program, h.id)
      holders.push({ id: h.id, account: account.id })
    },
  )
  const cards: string[] = []
  await pool(
    Array.from({ length: N.cards }, (_, i) => i),
    16,
    async (i) => {
      const h = holders[i % holders.length]!
      cards.push((await activeCard(t, token, h.id, h.account)).id)
    },
  )
  log(`seeded ${holders.length} cardholders and ${cards.length} cards on ${clock.id}`)
  await pool(
    Array.from({ length: N.authorizations }, (_, i) => i),
    32,
    async (i) => {
      const auth = await ok(t, token, 'POST', '/v1/simulate/authorizations', {
        card_id: cards[i % cards.length],
        amount: 100 + (i % 900),
        currency: 'USD',
        merchant: MERCHANT,
      })
      if (auth.status !== 'pending') throw new Error(`authorization ${auth.id} is ${auth.status}`)
    },
  )
  log(`seeded ${N.authorizations} pending authorizations`)
  // eSIMs of the clock's cardholders, written in SQL (valid until some day of the 30 the advance covers).
  const now = t.clock.now()
  const esims = Array.from({ length: N.esims }, (_, i) => {
    const at = new Date(now.getTime() + i)
    return {
      id: newId('esim', at),
      order: newId('esord', at),
      holder: holders[i % holders.length]!.id,
      iccid: `8944500${String(100_000_000_000 + i)}`,
      valid: new Date(now.getTime() + (1 + (i % 29)) * DAY_MS).toISOString(),
    }
  })
  await sql`
    INSERT INTO esims (id, organization_id, environment, iccid, smdp_address, matching_id, cardholder_id, order_id,
      status, valid_until, validity_warned_hours, auto_top_up_runs, created_at, updated_at)
    SELECT u.id, ${tenant.organizationId}, 'sandbox', u.iccid, 'smdp.bench.example', u.iccid, u.holder, u.ord,
      'in_use', u.valid::timestamptz, '{}', 0, ${now}, ${now}
    FROM unnest(${esims.map((e) => e.id)}::text[], ${esims.map((e) => e.iccid)}::text[],
      ${esims.map((e) => e.holder)}::text[], ${esims.map((e) => e.order)}::text[],
      ${esims.map((e) => e.valid)}::text[]) AS u(id, iccid, holder, ord, valid)`.execute(t.deps.db)
  await sql`ANALYZE`.execute(t.deps.db)
  const seedSeconds = (performance.now() - seeding) / 1000
  log(`seeded ${N.esims} eSIMs; seeding took ${seedSeconds.toFixed(1)} s`)

  // The other organization: no clock, a few funded cards.
  const other = await createTenant(t)
  const otherToken = await other.token()
  const otherCards: string[] = []
  for (let i = 0; i < 10; i++) {
    const h = await cardholder(t, otherToken, null)
    const account = await fundedAccount(t, otherToken, other.programs.full.id, h.id)
    otherCards.push((await activeCard(t, otherToken, h.id, account.id)).id)
  }

  const uptimeBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')
  log(`baseline: ${rate}/s of the other organization for ${seconds} s…`)
  const baseline = await load(
    t,
    otherToken,
    otherCards,
    new Promise((r) => setTimeout(r, seconds * 1000)),
  )
  log(`advancing ${clock.id} by P30D under the same load…`)
  const started = performance.now()
  let advanceSeconds = 0
  const advance = ok(t, token, 'POST', `/v1/simulate/clocks/${clock.id}/advance`, {
    by: 'P30D',
  }).then((c) => {
    advanceSeconds = (performance.now() - started) / 1000
    return c
  })
  const during = await load(t, otherToken, otherCards, advance)
  const advanced = await advance
  const expired = await sql<{ n: string }>`
    SELECT count(*) AS n FROM authorizations
    WHERE organization_id = ${tenant.organizationId} AND status = 'expired'`.execute(t.deps.db)
  const figures = {
    date: new Date().toISOString(),
    loadavg: uptimeBefore,
    objects: N,
    expired: Number(expired.rows[0]!.n),
    clock: advanced.status,
    advanceSeconds: Math.round(advanceSeconds * 10) / 10,
    seedSeconds: Math.round(seedSeconds),
    rate,
    baseline,
    during,
    p99Ratio: Math.round((during.p99 / baseline.p99) * 100) / 100,
  }
  log(JSON.stringify(figures, null, 2))
  log(
    `advance: ${figures.advanceSeconds} s (target < 30 s) for ${figures.expired} holds expired; ` +
      `other organization p99 ${baseline.p99} ms alone, ${during.p99} ms during (×${figures.p99Ratio}, target ≤ 1.2)`,
  )
  const dir = fileURLToPath(new URL('./results/', import.meta.url))
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `clocks-${Date.now()}.json`), JSON.stringify(figures, null, 2))
} finally {
  await t.close()
}
