// The decision without HTTP, for bench/authorizations.ts: the engine's `authorize()` called in-process (card
// read, account lock, rules, hold, authorization row and event in one transaction) on a PostgreSQL database of
// its own, and the pure rule function `decide()` alone.
import { existsSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import type { RequestCtx } from '../src/http/context.js'
import { decide, type DecisionInput } from '../src/modules/authorizations/decide.js'
import { authorize } from '../src/modules/authorizations/service.js'
import { createTenant, startTestApp, type TestApp } from '../test/helpers/app.js'
import { benchDatabaseUrl, isLocalDatabase } from './platform-harness.js'

export interface EngineFigures {
  cards: number
  concurrency: number
  decisions: number
  rate: number
  p50: number
  p90: number
  p99: number
  max: number
  /** CPU milliseconds per decision of this process and of the PostgreSQL backends serving it. */
  nodeCpuMs: number
  pgCpuMs: number | null
}

function cpuSeconds(pid: number): number {
  if (!existsSync(`/proc/${pid}/stat`)) return 0
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** An API call of the in-process app that must succeed: its JSON answer. */
export async function ok(
  t: TestApp,
  token: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<any> {
  const res = await t.api(token, method, url, body)
  if (res.statusCode >= 300) throw new Error(`${method} ${url} → ${res.statusCode} ${res.body}`)
  return res.json()
}

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 100) / 100
}

/** `concurrency` callers deciding authorizations on random cards for `seconds`, after a short warm-up. */
/** A cardholder `Bench <lastName>` whose KYC is approved: what the benchmarks issue cards to. */
export async function approvedCardholder(
  t: TestApp,
  token: string,
  lastName: string,
  email: string,
): Promise<{ id: string }> {
  const holder = await ok(t, token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Bench',
    last_name: lastName,
    email,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
    identity_document: { type: 'passport', number: 'P1' },
  })
  await ok(t, token, 'POST', `/v1/cardholders/${holder.id}/kyc`, {
    status: 'approved',
    provider: 'bench',
    verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
  })
  return holder
}

export async function engineRun(options: {
  cards: number
  concurrency: number
  seconds: number
}): Promise<EngineFigures> {
  process.env.DATABASE_URL = benchDatabaseUrl()
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } })
  try {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const holder = await approvedCardholder(t, token, 'Engine', 'engine@example.com')
    const cards: string[] = []
    let next = 0
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < options.cards) {
          const account = await ok(t, token, 'POST', '/v1/accounts', {
            program_id: tenant.programs.full.id,
            cardholder_id: holder.id,
            currency: 'USD',
          })
          await ok(t, token, 'POST', `/v1/accounts/${account.id}/credit`, {
            amount: 1_000_000_000_000,
          })
          const card = await ok(t, token, 'POST', '/v1/cards', {
            cardholder_id: holder.id,
            account_id: account.id,
            form_factor: 'virtual',
            card_type: 'prepaid',
            embossed_name: 'BENCH ENGINE',
            delivery_address: {
              name: 'Bench',
              line1: '1 Main St',
              city: 'Springfield',
              postal_code: '12345',
              country: 'USA',
            },
          })
          await ok(t, token, 'POST', `/v1/simulate/cards/${card.id}/issue`)
          cards.push(card.id)
        }
      }),
    )
    const ctx: RequestCtx = {
      requestId: 'req_bench',
      organizationId: tenant.organizationId,
      environment: 'sandbox',
      clientId: tenant.clientId,
      scopes: new Set(),
    }
    const one = () =>
      authorize(t.deps, ctx, {
        card_id: cards[Math.floor(Math.random() * cards.length)],
        amount: 1 + Math.floor(Math.random() * 10_000),
        currency: 'USD',
        merchant: { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' },
      })
    const run = async (ms: number, latencies: number[] | null) => {
      const until = performance.now() + ms
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (performance.now() < until) {
            const start = performance.now()
            await one()
            latencies?.push(performance.now() - start)
          }
        }),
      )
    }
    await run(2000, null)
    const { rows } = await sql<{
      pid: number
    }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(t.deps.db)
    const pids = rows.map((r) => r.pid)
    const local = isLocalDatabase(process.env.DATABASE_URL)
    if (process.env.BENCH_PRIORITY)
      for (const pid of [process.pid, ...(local ? pids : [])])
        setPriority(pid, Number(process.env.BENCH_PRIORITY))
    const pg0 = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
    const cpu0 = process.cpuUsage()
    const latencies: number[] = []
    const started = performance.now()
    await run(options.seconds * 1000, latencies)
    const elapsed = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpu0)
    const pgSeconds = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - pg0
    latencies.sort((a, b) => a - b)
    const perDecision = (seconds: number) =>
      Math.round(((seconds * 1000) / latencies.length) * 100) / 100
    return {
      cards: cards.length,
      concurrency: options.concurrency,
      decisions: latencies.length,
      rate: Math.round(latencies.length / elapsed),
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: percentile(latencies, 1),
      nodeCpuMs: perDecision((cpu.user + cpu.system) / 1e6),
      pgCpuMs: local ? perDecision(pgSeconds) : null,
    }
  } finally {
    await t.close()
  }
}

/** `decide()` on its own: the rules with every fact already read (a card with MCC, country and limit rules). */
export function pureDecideRun(count: number): {
  decisions: number
  rate: number
  nsPerDecision: number
} {
  const input: DecisionInput = {
    amount: 2500,
    currency: 'USD',
    merchant: { mcc: '5814', country: 'USA' },
    card: {
      status: 'active',
      expMonth: 12,
      expYear: 2099,
      controls: {
        spending_limits: [
          { amount: 50_000, interval: 'per_authorization' },
          { amount: 200_000, interval: 'daily' },
        ],
        allowed_mccs: [],
        blocked_mccs: ['7995'],
        allowed_countries: ['USA', 'CAN'],
        blocked_countries: [],
      },
    },
    account: { status: 'open', currency: 'USD', available: 1_000_000 },
    tokenStatus: 'active',
    expiryMatches: true,
    cvcMatches: true,
    spent: { daily: 10_000 },
    alreadyAuthorized: 0,
    now: new Date(),
  }
  let approved = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) if (decide(input).approved) approved++
  const ns = Number(process.hrtime.bigint() - start)
  if (approved !== count) throw new Error('decide() should approve the benchmark input')
  return {
    decisions: count,
    rate: Math.round(count / (ns / 1e9)),
    nsPerDecision: Math.round((ns / count) * 10) / 10,
  }
}
