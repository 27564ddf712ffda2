// A backtest over stored authorizations, for bench/authorizations.ts: `--backtest-authorizations` (100,000) authorizations
// of 30 days on 100 cards, seeded in SQL straight into a PostgreSQL database of its own (making them through the API
// would take minutes and measure the decisions, not the replay), then one backtest per rule asked through the API and
// run in-process by its job handler (`runBacktest`): a day's count limit (velocity, with each authorization's later
// reversal or capture replayed in time order) and a condition reading the card's last hour.
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { newId } from '../src/lib/ids.js'
import { runBacktest } from '../src/modules/authorization-rules/index.js'
import { createTenant, startTestApp, type TestApp } from '../test/helpers/app.js'
import { benchDatabaseUrl } from './platform-harness.js'
import { approvedCardholder, ok } from './authorizations-engine-harness.js'

/** The target: this many stored authorizations replayed in less than this many seconds. */
export const BACKTEST_TARGET = { authorizations: 100_000, seconds: 30 }

export interface BacktestFigures {
  rule: string
  stored: number
  read: number
  pages: number
  evaluated: number
  wouldDecline: number
  seconds: number
  seedSeconds: number
}

const DAY_MS = 24 * 60 * 60 * 1000
const MERCHANTS = [
  { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' },
  { name: 'Grocer', mcc: '5411', city: 'Leeds', country: 'GBR' },
  { name: 'Lucky Spins', mcc: '7995', city: 'Valletta', country: 'MLT' },
]

/** 100 cards of one cardholder, each on its own account (no money needed: the authorizations are written in SQL). */
async function makeCards(t: TestApp, token: string, programId: string, count: number) {
  const holder = await approvedCardholder(t, token, 'Backtest', 'backtest@example.com')
  const cards: { id: string; account_id: string; program_id: string }[] = []
  for (let i = 0; i < count; i++) {
    const account = await ok(t, token, 'POST', '/v1/accounts', {
      program_id: programId,
      cardholder_id: holder.id,
      currency: 'USD',
    })
    const card = await ok(t, token, 'POST', '/v1/cards', {
      cardholder_id: holder.id,
      account_id: account.id,
      form_factor: 'virtual',
      card_type: 'prepaid',
      embossed_name: 'BENCH BACKTEST',
      delivery_address: {
        name: 'Bench',
        line1: '1 Main St',
        city: 'Springfield',
        postal_code: '12345',
        country: 'USA',
      },
    })
    cards.push({ id: card.id, account_id: account.id, program_id: programId })
  }
  return { holder, cards }
}

/**
 * `count` authorizations over the 30 days before `now`, oldest first, spread over `cards`: 5 % declined, of the approved
 * 10 % reversed and 40 % captured (a tenth of those for less than held) an hour later, the rest still pending. Ids are
 * made from their creation time, as the service makes them.
 */
async function seedAuthorizations(
  t: TestApp,
  organizationId: string,
  cards: { id: string; account_id: string; program_id: string }[],
  count: number,
  now: Date,
): Promise<void> {
  const start = now.getTime() - 30 * DAY_MS
  const step = (30 * DAY_MS) / count
  const columns = {
    id: [] as string[],
    card: [] as string[],
    account: [] as string[],
    program: [] as string[],
    status: [] as string[],
    approved: [] as boolean[],
    amount: [] as number[],
    held: [] as number[],
    captured: [] as number[],
    reversed: [] as number[],
    merchant: [] as string[],
    history: [] as string[],
    created: [] as string[],
    updated: [] as string[],
  }
  for (let i = 0; i < count; i++) {
    const at = new Date(Math.floor(start + i * step))
    const card = cards[i % cards.length]!
    const amount = 100 + ((i * 7919) % 10_000)
    const approved = i % 20 !== 7
    const fate = i % 10
    const reversed = approved && fate === 3
    const captured = approved && fate >= 6
    const capturedAmount = captured ? (fate === 9 ? Math.floor(amount / 2) : amount) : 0
    const merchant = MERCHANTS[i % MERCHANTS.length]!
    columns.id.push(newId('auth', at))
    columns.card.push(card.id)
    columns.account.push(card.account_id)
    columns.program.push(card.program_id)
    columns.status.push(
      !approved ? 'declined' : reversed ? 'reversed' : captured ? 'closed' : 'pending',
    )
    columns.approved.push(approved)
    columns.amount.push(amount)
    columns.held.push(approved && !reversed && !captured ? amount : 0)
    columns.captured.push(capturedAmount)
    columns.reversed.push(reversed ? amount : 0)
    columns.merchant.push(JSON.stringify(merchant))
    columns.history.push(
      JSON.stringify([
        {
          type: 'authorization',
          amount,
          approved,
          decline_reason: approved ? null : 'insufficient_funds',
          created_at: at.toISOString(),
        },
      ]),
    )
    columns.created.push(at.toISOString())
    columns.updated.push(
      new Date(at.getTime() + (reversed || captured ? 3_600_000 : 0)).toISOString(),
    )
  }
  for (let from = 0; from < count; from += 20_000) {
    const slice = <T>(list: T[]) => list.slice(from, from + 20_000)
    await sql`
      INSERT INTO authorizations (id, organization_id, environment, program_id, card_id, account_id, status, approved,
        amount, held_amount, captured_amount, reversed_amount, currency, merchant_amount, merchant_currency, merchant,
        decline_reason, request_history, created_at, updated_at)
      SELECT u.id, ${organizationId}, 'sandbox', u.program, u.card, u.account, u.status, u.approved, u.amount, u.held,
        u.captured, u.reversed, 'USD', u.amount, 'USD', u.merchant::jsonb,
        CASE WHEN u.approved THEN NULL ELSE 'insufficient_funds' END, u.history::jsonb, u.created, u.updated
      FROM unnest(${slice(columns.id)}::text[], ${slice(columns.card)}::text[], ${slice(columns.account)}::text[],
        ${slice(columns.program)}::text[], ${slice(columns.status)}::text[], ${slice(columns.approved)}::boolean[],
        ${slice(columns.amount)}::bigint[], ${slice(columns.held)}::bigint[], ${slice(columns.captured)}::bigint[],
        ${slice(columns.reversed)}::bigint[], ${slice(columns.merchant)}::text[], ${slice(columns.history)}::text[],
        ${slice(columns.created)}::timestamptz[], ${slice(columns.updated)}::timestamptz[])
        AS u(id, card, account, program, status, approved, amount, held, captured, reversed, merchant, history,
          created, updated)`.execute(t.deps.db)
  }
  await sql`ANALYZE authorizations`.execute(t.deps.db)
}

/** Seeds the authorizations, then times one backtest per rule over their 30 days. */
export async function backtestRun(options: { authorizations: number }): Promise<BacktestFigures[]> {
  process.env.DATABASE_URL = benchDatabaseUrl()
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } })
  try {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const { holder, cards } = await makeCards(t, token, tenant.programs.full.id, 100)
    const now = t.clock.now()
    const seeding = performance.now()
    await seedAuthorizations(t, tenant.organizationId, cards, options.authorizations, now)
    const seedSeconds = (performance.now() - seeding) / 1000
    const rules = [
      {
        label: 'velocity: 20 a day per card, on the cardholder',
        body: {
          type: 'velocity_limit',
          parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 20 },
        },
      },
      {
        label: "condition: the card's last hour ≥ 3 approved and mcc 7995",
        body: {
          type: 'condition',
          parameters: {
            conditions: [
              { attribute: 'authorization_count_1h', operator: 'gte', value: 3 },
              { attribute: 'mcc', operator: 'is', value: '7995' },
            ],
          },
        },
      },
    ]
    const figures: BacktestFigures[] = []
    for (const rule of rules) {
      const created = await ok(t, token, 'POST', '/v1/authorization_rules', {
        name: 'bench backtest',
        scope: { level: 'cardholder', ids: [holder.id] },
        mode: 'shadow',
        ...rule.body,
      })
      const backtest = await ok(
        t,
        token,
        'POST',
        `/v1/authorization_rules/${created.id}/backtests`,
        {
          from: new Date(now.getTime() - 30 * DAY_MS).toISOString(),
          to: new Date(now.getTime() + 1000).toISOString(),
        },
      )
      const started = performance.now()
      const run = await runBacktest(t.deps, backtest.id)
      const seconds = (performance.now() - started) / 1000
      const done = await ok(
        t,
        token,
        'GET',
        `/v1/authorization_rules/${created.id}/backtests/${backtest.id}`,
      )
      if (done.status !== 'completed') throw new Error(`backtest ${backtest.id} is ${done.status}`)
      figures.push({
        rule: rule.label,
        stored: options.authorizations,
        read: run.read,
        pages: run.pages,
        evaluated: done.results.evaluated,
        wouldDecline: done.results.would_decline,
        seconds: Math.round(seconds * 100) / 100,
        seedSeconds: Math.round(seedSeconds * 10) / 10,
      })
    }
    return figures
  } finally {
    await t.close()
  }
}
