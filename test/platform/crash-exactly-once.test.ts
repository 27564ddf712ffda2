/**
 * Issue 18: exactly once under failure (decisions.md, "Exactly once under failure"), against a real `svc serve`
 * that is SIGKILLed twice under load and started again on the same database and port.
 *
 * PostgreSQL only (DATABASE_URL): the service runs as a child process on a database of its own, which the
 * embedded PGlite (it lives inside one process) cannot offer.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test -- test/platform/crash-exactly-once.test.ts
 *
 * CRASH_SEED repeats a run's choices (amounts, mix, kill moments; the kill still lands on whatever is in
 * flight then); CRASH_LOG_LEVEL sets the children's LOG_LEVEL (default error; their error lines are shown when
 * something is found); CRASH_KEEP_DB=1 keeps the database for a post-mortem (its URL is in the diagnostics).
 *
 * Two phases. In each, LANES requests are kept in flight (credits and debits with an Idempotency-Key only, with a
 * client_transaction_id only, and with both; simulated authorizations with an Idempotency-Key; in the second
 * phase also partial captures, close_authorization false, of the first phase's approved authorizations, so a
 * capture that ran twice would leave two transactions), the child is SIGKILLed 300-1500 ms into the phase and
 * started again, and every request that had no final answer (network error, 5xx, 429, 409
 * idempotency_request_in_progress) is sent again with the same key and body, with backoff, until it has one
 * or the phase's time runs out. Then: every request sent once more (an Idempotency-Key replays the first final
 * answer; a client_transaction_id alone replays with nothing moved), and the effects are counted through
 * GET /v1/accounts/{id}/entries (every credit and debit carries a unique `reference`) and the tables
 * (authorizations by their unique merchant name, holds, capture transactions, events). Every problem found is
 * listed by kind in the test's diagnostics before the one assertion that there are none.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { freshDatabaseUrl } from '../helpers/db.js'
import {
  ServiceProcess,
  freePort,
  history,
  http,
  listAll,
  pool,
  rng,
  settle,
  setUpTenant,
  sleep,
  type AdjustMode,
  type CrashTenant,
  type Op,
  type SendLimits,
} from './crash-support.js'

const SKIP = process.env.DATABASE_URL
  ? false
  : 'PostgreSQL only (set DATABASE_URL): it runs `svc serve` as a child process on a database of its own, SIGKILLs it and restarts it on that database; the embedded PGlite lives inside one process'

/** Requests kept in flight. */
const LANES = 24
const ACCOUNTS = 6
const FUNDING = 1_000_000_000
/** New requests per phase stop here even if the kill has not happened yet (it has, at any sane speed). */
const MAX_OPS_PER_PHASE = 4000
/** After the restart: how long new requests keep coming, then how long the retries of the interrupted ones may take. */
const LOAD_AFTER_RESTART_MS = 500
const DRAIN_MS = 15_000
const MAX_ATTEMPTS = 300
/** A request that takes longer counts as lost in the crash and is sent again (same key, same body). */
const ATTEMPT_TIMEOUT_MS = 8_000

/** Problems by kind, each with a few examples. */
class Findings {
  private readonly byKind = new Map<string, string[]>()
  add(kind: string, example: string): void {
    const list = this.byKind.get(kind) ?? []
    list.push(example)
    this.byKind.set(kind, list)
  }
  get total(): number {
    let n = 0
    for (const list of this.byKind.values()) n += list.length
    return n
  }
  summary(): string {
    if (this.byKind.size === 0) return 'no problems'
    return [...this.byKind]
      .map(
        ([kind, list]) =>
          `${kind}: ${list.length}\n    ${list.slice(0, 5).join('\n    ')}${list.length > 5 ? '\n    …' : ''}`,
      )
      .join('\n  ')
  }
  counts(): string {
    return [...this.byKind].map(([kind, list]) => `${kind}: ${list.length}`).join(', ') || 'none'
  }
}

describe('exactly once when the service is killed under load (PostgreSQL, svc serve child process)', () => {
  let database: { url: string | null; drop: () => Promise<void> } | null = null
  let svc: ServiceProcess | null = null
  let tenant: CrashTenant
  const killOnExit = () => svc?.killSync()

  before(
    async () => {
      if (SKIP) return
      database = await freshDatabaseUrl()
      svc = new ServiceProcess(database.url!, await freePort())
      process.once('exit', killOnExit)
      await svc.start(60_000) // the first start also migrates the fresh database
      tenant = await setUpTenant(svc, ACCOUNTS, FUNDING)
    },
    { timeout: 90_000 },
  )

  after(async () => {
    await svc?.stop()
    process.removeListener('exit', killOnExit)
    if (process.env.CRASH_KEEP_DB === '1')
      process.stdout.write(`# crash test database kept: ${database?.url}\n`)
    else await database?.drop()
  })

  test('credits, debits, authorizations and captures retried across two SIGKILLs each take effect exactly once, with their events, and replay their first answer', {
    skip: SKIP,
    timeout: 110_000,
  }, async (ctx) => {
    const testStart = Date.now()
    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000)
    const random = rng(seed)
    const run = randomBytes(3).toString('hex')
    const service = svc!
    const { token, accounts } = tenant
    const ops: Op[] = []
    const log: string[] = [`seed ${seed}, run ${run}`]
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]
    const modes: AdjustMode[] = ['key', 'ctid', 'both']

    const newOp = (
      phase: number,
      fields: Omit<Op, 'n' | 'phase' | 'attempts' | 'final' | 'unresolved'>,
    ): Op => {
      const op: Op = {
        n: ops.length,
        phase,
        attempts: [],
        final: null,
        unresolved: null,
        ...fields,
      }
      ops.push(op)
      return op
    }
    const newAdjustment = (phase: number): Op => {
      const n = ops.length
      const account = pick(accounts)
      const kind = random() < 0.5 ? ('credit' as const) : ('debit' as const)
      const mode = modes[n % 3]
      const tag = `crash-${run}-${n}`
      return newOp(phase, {
        kind,
        mode,
        accountId: account.id,
        path: `/v1/accounts/${account.id}/${kind}`,
        tag,
        body: {
          amount: 1 + Math.floor(random() * 5000),
          reference: tag,
          ...(mode !== 'key' ? { client_transaction_id: `ctid-${run}-${n}` } : {}),
        },
        key: mode !== 'ctid' ? `idem-${run}-${n}` : null,
      })
    }
    const newAuthorization = (phase: number): Op => {
      const n = ops.length
      const account = pick(accounts)
      const tag = `crash-${run}-${n}`
      return newOp(phase, {
        kind: 'authorize',
        accountId: account.id,
        cardId: account.cardId,
        path: '/v1/simulate/authorizations',
        tag,
        body: {
          card_id: account.cardId,
          amount: 100 + Math.floor(random() * 5000),
          currency: 'USD',
          merchant: { name: tag, mcc: '5814', city: 'Springfield', country: 'USA' },
        },
        key: `idem-${run}-${n}`,
      })
    }
    const newCapture = (phase: number, authorization: any): Op => {
      const n = ops.length
      return newOp(phase, {
        kind: 'capture',
        accountId: authorization.account_id,
        cardId: authorization.card_id,
        authorizationId: authorization.id,
        path: `/v1/simulate/authorizations/${authorization.id}/capture`,
        tag: authorization.id,
        // Partial and not closing: a capture that ran twice would leave two transactions, not a refusal.
        body: {
          amount: Math.max(1, Math.floor(authorization.amount / 2)),
          close_authorization: false,
        },
        key: `idem-${run}-${n}`,
      })
    }

    /** One phase: load, a SIGKILL at a random moment, the restart, a little more load, then the retries drain. */
    const runPhase = async (phase: number, next: () => Op) => {
      const start = Date.now()
      let issuing = true
      let deadline = start + 60_000 // until the restart has happened
      const limits: SendLimits = {
        deadline: () => deadline,
        maxAttempts: MAX_ATTEMPTS,
        attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
      }
      let issued = 0
      const lanes = Array.from({ length: LANES }, async () => {
        while (issuing && issued < MAX_OPS_PER_PHASE) {
          issued++
          await settle(service.baseUrl, token, next(), limits, random)
        }
      })
      const killAfter = 300 + Math.floor(random() * 1200)
      await sleep(killAfter)
      const inFlight = ops.filter((o) => o.phase === phase && o.final === null).length
      const answered = ops.filter((o) => o.phase === phase && o.final !== null).length
      await service.kill()
      const killedAt = Date.now()
      let startMs: number
      try {
        startMs = await service.start()
      } catch (err) {
        // No service to retry against: stop the senders at once rather than let them retry until the deadline.
        issuing = false
        deadline = 0
        await Promise.all(lanes)
        throw err
      }
      deadline = Date.now() + DRAIN_MS
      await sleep(LOAD_AFTER_RESTART_MS)
      issuing = false
      await Promise.all(lanes)
      const mine = ops.filter((o) => o.phase === phase)
      const interrupted = mine.filter((o) => o.attempts.length > 1 || o.final === null)
      log.push(
        `phase ${phase}: SIGKILL at ${killAfter} ms with ${inFlight} requests in flight (${answered} answered before), restarted in ${startMs} ms, ` +
          `${mine.length} requests, ${interrupted.length} needed a retry, ${mine.filter((o) => o.final === null).length} without a final answer; ` +
          `phase took ${Date.now() - start} ms (down ${startMs} ms from ${killedAt - start} ms)`,
      )
    }

    // Phase 1: credits and debits (three idempotency modes) and authorizations.
    await runPhase(1, () => (random() < 0.6 ? newAdjustment(1) : newAuthorization(1)))

    // Phase 2: captures of the approved authorizations of phase 1, and more of the rest.
    const capturable = ops
      .filter(
        (o) => o.kind === 'authorize' && o.final?.status === 201 && o.final.json?.approved === true,
      )
      .map((o) => o.final!.json)
    await runPhase(2, () => {
      if (capturable.length > 0 && random() < 0.5) return newCapture(2, capturable.shift())
      return random() < 0.6 ? newAdjustment(2) : newAuthorization(2)
    })

    const findings = new Findings()
    const kindOf = (o: Op) =>
      `${o.kind}${o.mode ? ` with ${o.mode === 'both' ? 'key and ctid' : o.mode}` : ''}`
    const describeOp = (o: Op) =>
      `#${o.n} ${o.kind}${o.mode ? `/${o.mode}` : ''} ${o.tag} key=${o.key ?? '-'} [${history(o)}]${o.final ? ` → ${o.final.status}${o.final.replay ? ' (replay)' : ''}` : ''}`

    // Every request has a final answer, and it is the one the request should get (funds are ample everywhere).
    for (const o of ops) {
      if (!o.final) {
        findings.add(
          `no final answer within the time: ${kindOf(o)}`,
          `${describeOp(o)} last: ${o.unresolved}`,
        )
        continue
      }
      const ok =
        o.kind === 'authorize'
          ? o.final.status === 201 && o.final.json?.approved === true
          : o.kind === 'capture'
            ? o.final.status === 201 && o.final.json?.object === 'transaction'
            : o.final.status === 200 && o.final.json?.id === o.accountId
      if (!ok)
        findings.add('unexpected final answer', `${describeOp(o)} ${o.final.text.slice(0, 300)}`)
    }

    // A further send of each answered request replays it: an Idempotency-Key its first final answer, byte for
    // byte in content; a client_transaction_id alone a 200 with Idempotent-Replay and nothing moved (checked below).
    const replayStart = Date.now()
    const replayLimits: SendLimits = {
      deadline: () => replayStart + 15_000,
      maxAttempts: 20,
      attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    }
    await pool(
      ops.filter((o) => o.final),
      LANES,
      async (o) => {
        const again: Op = { ...o, attempts: [], final: null, unresolved: null }
        await settle(service.baseUrl, token, again, replayLimits, random)
        if (!again.final) {
          findings.add('replay had no final answer', `${describeOp(o)} replay [${history(again)}]`)
          return
        }
        if (!again.final.replay)
          findings.add(
            'second send not marked Idempotent-Replay',
            `${describeOp(o)} second → ${again.final.status} ${again.final.text.slice(0, 200)}`,
          )
        if (o.key) {
          if (
            again.final.status !== o.final!.status ||
            !isDeepStrictEqual(again.final.json, o.final!.json)
          ) {
            findings.add(
              'replay differs from the first final answer',
              `${describeOp(o)}\n      first ${o.final!.text.slice(0, 200)}\n      again ${again.final.status} ${again.final.text.slice(0, 200)}`,
            )
          }
        } else if (again.final.status !== 200 || again.final.json?.id !== o.accountId) {
          findings.add(
            'client_transaction_id replay is not 200 with the account',
            `${describeOp(o)} second → ${again.final.status} ${again.final.text.slice(0, 200)}`,
          )
        }
      },
    )
    log.push(
      `replay pass: ${ops.filter((o) => o.final).length} requests in ${Date.now() - replayStart} ms`,
    )

    // The ledger through the API: every entry of every account, page by page.
    const entriesByAccount = new Map<string, any[]>()
    for (const a of accounts)
      entriesByAccount.set(
        a.id,
        (await listAll(service.baseUrl, token, `/v1/accounts/${a.id}/entries`)).reverse(),
      )
    const allEntries = [...entriesByAccount.values()].flat()
    const byReference = new Map<string, any[]>()
    const byCtid = new Map<string, any[]>()
    const bySource = new Map<string, any[]>()
    for (const e of allEntries) {
      if (e.reference) byReference.set(e.reference, [...(byReference.get(e.reference) ?? []), e])
      if (e.client_transaction_id)
        byCtid.set(`${e.account_id}|${e.client_transaction_id}`, [
          ...(byCtid.get(`${e.account_id}|${e.client_transaction_id}`) ?? []),
          e,
        ])
      if (e.source_id)
        bySource.set(`${e.type}|${e.source_id}`, [
          ...(bySource.get(`${e.type}|${e.source_id}`) ?? []),
          e,
        ])
    }

    // The tables (read only).
    const pgc = new pg.Client({ connectionString: database!.url! })
    await pgc.connect()
    const org = tenant.organizationId
    let authorizations: any[],
      holds: any[],
      transactions: any[],
      events: any[],
      dbEntryCounts: any[],
      stuckKeys: number | string
    try {
      authorizations = (
        await pgc.query(
          `SELECT id, merchant->>'name' AS name, account_id, status, approved, amount::int AS amount FROM authorizations WHERE organization_id = $1`,
          [org],
        )
      ).rows
      holds = (
        await pgc.query(
          `SELECT id, source_id, account_id, status, remaining::bigint AS remaining FROM holds WHERE organization_id = $1`,
          [org],
        )
      ).rows
      transactions = (
        await pgc.query(
          `SELECT id, authorization_id, type, amount::int AS amount FROM transactions WHERE organization_id = $1`,
          [org],
        )
      ).rows
      events = (
        await pgc.query(
          `SELECT type, data->'object'->>'id' AS object_id, count(*)::int AS n FROM events WHERE organization_id = $1 GROUP BY 1, 2`,
          [org],
        )
      ).rows
      dbEntryCounts = (
        await pgc.query(
          `SELECT account_id, count(*)::int AS n FROM ledger_entries WHERE organization_id = $1 GROUP BY 1`,
          [org],
        )
      ).rows
      try {
        stuckKeys = Number(
          (
            await pgc.query(
              `SELECT count(*)::int AS n FROM idempotency_keys WHERE organization_id = $1 AND state = 'in_progress'`,
              [org],
            )
          ).rows[0].n,
        )
      } catch (err) {
        // The rewritten table keeps no in-progress rows (a lock that dies with its holder says "running").
        stuckKeys =
          (err as { code?: string }).code === '42703'
            ? 'none (the table has no state column)'
            : `not counted (${(err as Error).message})`
      }
    } finally {
      await pgc.end()
    }
    const eventCount = (type: string, objectId: string) =>
      events.filter((e) => e.type === type && e.object_id === objectId).reduce((s, e) => s + e.n, 0)
    const authorizationsByName = new Map<string, any[]>()
    for (const a of authorizations)
      authorizationsByName.set(a.name, [...(authorizationsByName.get(a.name) ?? []), a])
    const holdsBySource = new Map<string, any[]>()
    for (const h of holds)
      holdsBySource.set(h.source_id, [...(holdsBySource.get(h.source_id) ?? []), h])
    const capturesByAuthorization = new Map<string, any[]>()
    for (const t of transactions.filter((x) => x.type === 'capture'))
      capturesByAuthorization.set(t.authorization_id, [
        ...(capturesByAuthorization.get(t.authorization_id) ?? []),
        t,
      ])

    // Each credit or debit: exactly one entry, found by its reference and (when it has one) its client_transaction_id.
    for (const o of ops.filter((x) => x.kind === 'credit' || x.kind === 'debit')) {
      const found = byReference.get(o.tag) ?? []
      const label = o.final ? '' : ' (no final answer)'
      if (found.length > 1)
        findings.add(
          `double effect: ${kindOf(o)}`,
          `${describeOp(o)}: ${found.length} entries ${found.map((e) => e.id).join(' ')}${label}`,
        )
      if (found.length === 0 && o.final)
        findings.add(`answered without effect: ${kindOf(o)}`, describeOp(o))
      if (found.length >= 1 && !o.final)
        findings.add(
          `effect without a final answer: ${kindOf(o)}`,
          `${describeOp(o)}: entry ${found[0].id}, last outcome ${o.unresolved}`,
        )
      for (const e of found) {
        if (
          e.type !== o.kind ||
          Math.abs(e.amount) !== o.body.amount ||
          e.account_id !== o.accountId
        )
          findings.add('entry does not match its request', `${describeOp(o)}: ${JSON.stringify(e)}`)
      }
      if (o.body.client_transaction_id) {
        const byId = byCtid.get(`${o.accountId}|${o.body.client_transaction_id}`) ?? []
        if (byId.length !== found.length)
          findings.add(
            'client_transaction_id and reference disagree',
            `${describeOp(o)}: ${byId.length} by id, ${found.length} by reference`,
          )
      }
      if (o.final?.status === 200 && found.length === 1 && !o.final.replay) {
        // The first answer is the account as this adjustment left it (the entry's balances after it).
        if (o.final.json.ledger_balance !== found[0].ledger_balance_after)
          findings.add(
            'answer does not show the balance after its entry',
            `${describeOp(o)}: answer ${o.final.json.ledger_balance}, entry ${found[0].ledger_balance_after}`,
          )
      }
    }

    // Each authorization request: exactly one authorization (its unique merchant name), the one answered, with one hold.
    for (const o of ops.filter((x) => x.kind === 'authorize')) {
      const found = authorizationsByName.get(o.tag) ?? []
      if (found.length > 1)
        findings.add(
          'double effect: authorization',
          `${describeOp(o)}: ${found.map((a) => a.id).join(' ')}${o.final ? '' : ' (no final answer)'}`,
        )
      if (found.length === 0 && o.final)
        findings.add('answered without effect: authorization', describeOp(o))
      if (found.length >= 1 && !o.final)
        findings.add(
          `effect without a final answer: ${kindOf(o)}`,
          `${describeOp(o)}: ${found[0].id}, last outcome ${o.unresolved}`,
        )
      if (o.final?.json?.id && found.length >= 1 && !found.some((a) => a.id === o.final!.json.id))
        findings.add(
          'answer names another authorization',
          `${describeOp(o)}: answered ${o.final.json.id}, stored ${found.map((a) => a.id).join(' ')}`,
        )
      for (const a of found) {
        const h = holdsBySource.get(a.id) ?? []
        const holdEntries = bySource.get(`hold|${a.id}`) ?? []
        if (h.length > 1 || holdEntries.length > 1)
          findings.add(
            'double effect: hold',
            `${describeOp(o)}: ${a.id} has ${h.length} holds, ${holdEntries.length} hold entries`,
          )
        if (a.approved && (h.length !== 1 || holdEntries.length !== 1))
          findings.add(
            'approved authorization without its hold',
            `${a.id}: ${h.length} holds, ${holdEntries.length} hold entries`,
          )
      }
    }

    // Each capture request: exactly one capture transaction of its authorization, the one answered, one capture entry.
    for (const o of ops.filter((x) => x.kind === 'capture')) {
      const found = capturesByAuthorization.get(o.authorizationId!) ?? []
      const entries = bySource.get(`capture|${o.authorizationId}`) ?? []
      if (found.length > 1 || entries.length > 1)
        findings.add(
          'double effect: capture',
          `${describeOp(o)}: ${found.length} transactions, ${entries.length} capture entries${o.final ? '' : ' (no final answer)'}`,
        )
      if (found.length === 0 && o.final)
        findings.add('answered without effect: capture', describeOp(o))
      if (found.length >= 1 && !o.final)
        findings.add(
          `effect without a final answer: ${kindOf(o)}`,
          `${describeOp(o)}: ${found[0].id}, last outcome ${o.unresolved}`,
        )
      if (found.length !== entries.length)
        findings.add(
          'capture transaction and ledger disagree',
          `${describeOp(o)}: ${found.length} transactions, ${entries.length} capture entries`,
        )
      if (o.final?.json?.id && found.length >= 1 && !found.some((t) => t.id === o.final!.json.id))
        findings.add(
          'answer names another transaction',
          `${describeOp(o)}: answered ${o.final.json.id}`,
        )
    }

    // Balances: the account (API) against its entries (API) and its open holds (table); the entries as a chain.
    for (const a of accounts) {
      const account = (
        await http(service.baseUrl, 'GET', `/v1/accounts/${a.id}`, { bearer: token })
      ).json
      const entries = entriesByAccount.get(a.id)!
      const settled = entries
        .filter((e) => e.type !== 'hold' && e.type !== 'hold_release')
        .reduce((s, e) => s + e.amount, 0)
      const held = holds
        .filter((h) => h.account_id === a.id && h.status === 'open')
        .reduce((s, h) => s + Number(h.remaining), 0)
      if (account.ledger_balance !== settled)
        findings.add(
          'ledger_balance is not the sum of the entries',
          `${a.id}: ${account.ledger_balance} vs ${settled}`,
        )
      if (account.held_balance !== held)
        findings.add(
          'held_balance is not the sum of open holds',
          `${a.id}: ${account.held_balance} vs ${held}`,
        )
      if (account.available_balance !== account.ledger_balance - account.held_balance)
        findings.add('available is not ledger − held', a.id)
      const dbCount = dbEntryCounts.find((r) => r.account_id === a.id)?.n ?? 0
      if (dbCount !== entries.length)
        findings.add(
          'entries list and table disagree',
          `${a.id}: ${entries.length} listed, ${dbCount} stored`,
        )
      // Each entry's balances follow from the one before: settled types move the ledger by their amount, a hold or
      // its release moves only the held balance (its amount is the change of the available balance), a capture
      // moves the ledger by its amount and gives up at most that much of the held balance.
      let ledger = 0
      let heldRun = 0
      for (const e of entries) {
        const holdType = e.type === 'hold' || e.type === 'hold_release'
        const ledgerOk = e.ledger_balance_after === ledger + (holdType ? 0 : e.amount)
        const heldOk = holdType
          ? e.held_balance_after === heldRun - e.amount
          : e.type === 'capture'
            ? e.held_balance_after <= heldRun && e.held_balance_after >= heldRun + e.amount
            : e.held_balance_after === heldRun
        if (
          !ledgerOk ||
          !heldOk ||
          e.available_balance_after !== e.ledger_balance_after - e.held_balance_after
        ) {
          findings.add(
            'entry chain broken',
            `${a.id} ${e.id} ${e.type} ${e.amount}: after ${e.ledger_balance_after}/${e.held_balance_after}/${e.available_balance_after}, before ${ledger}/${heldRun}`,
          )
        }
        ledger = e.ledger_balance_after
        heldRun = e.held_balance_after
      }
      const last = entries[entries.length - 1]
      if (
        last &&
        (last.ledger_balance_after !== account.ledger_balance ||
          last.held_balance_after !== account.held_balance)
      )
        findings.add('newest entry does not show the account balances', a.id)
      // One account.credited / account.debited event per credit / debit entry.
      for (const [type, event] of [
        ['credit', 'account.credited'],
        ['debit', 'account.debited'],
      ] as const) {
        const n = entries.filter((e) => e.type === type).length
        const m = eventCount(event, a.id)
        if (n !== m)
          findings.add(`${event} events ≠ ${type} entries`, `${a.id}: ${n} entries, ${m} events`)
      }
    }

    // Events: authorization.created for every authorization, transaction.created for every capture, one
    // authorization.updated per capture (the only move an authorization makes here).
    for (const a of authorizations) {
      const created = eventCount('authorization.created', a.id)
      if (created !== 1)
        findings.add('authorization.created events ≠ 1', `${a.id} (${a.name}): ${created}`)
      const captures = (capturesByAuthorization.get(a.id) ?? []).length
      const updated = eventCount('authorization.updated', a.id)
      if (updated !== captures)
        findings.add(
          'authorization.updated events ≠ captures',
          `${a.id}: ${updated} events, ${captures} captures`,
        )
    }
    for (const t of transactions.filter((x) => x.type === 'capture')) {
      const created = eventCount('transaction.created', t.id)
      if (created !== 1) findings.add('transaction.created events ≠ 1', `${t.id}: ${created}`)
    }

    const count = (kind: string, mode?: string) =>
      ops.filter((o) => o.kind === kind && (!mode || o.mode === mode)).length
    log.push(
      `requests: credit/debit key ${count('credit', 'key') + count('debit', 'key')}, ctid ${count('credit', 'ctid') + count('debit', 'ctid')}, ` +
        `both ${count('credit', 'both') + count('debit', 'both')}; authorizations ${count('authorize')}; captures ${count('capture')}; ` +
        `retried ${ops.filter((o) => o.attempts.length > 1).length} (network ${ops.filter((o) => o.attempts.some((a) => a.outcome === 'network')).length}, ` +
        `5xx ${ops.filter((o) => o.attempts.some((a) => a.outcome.startsWith('5xx'))).length}, in_progress ${ops.filter((o) => o.attempts.some((a) => a.outcome === 'in_progress')).length})`,
    )
    log.push(
      `stored: ${allEntries.length} entries, ${authorizations.length} authorizations, ${holds.length} holds, ${transactions.length} transactions; ` +
        `idempotency keys left in_progress: ${stuckKeys}; service started ${service.starts} times, killed ${service.kills}`,
    )
    log.push(`findings: ${findings.counts()}`)
    log.push(`test body took ${Date.now() - testStart} ms`)
    for (const line of log) ctx.diagnostic(line)
    if (findings.total > 0) {
      for (const line of `details:\n  ${findings.summary()}`.split('\n')) ctx.diagnostic(line)
      // What the service logged at error level (one of each message), to start the diagnosis.
      const seen = new Set<string>()
      for (const line of service.errors) {
        let message = line
        try {
          const parsed = JSON.parse(line.replace(/^\[start \d+\] /, ''))
          message = `${parsed.msg} ${parsed.err?.message ?? ''}`
        } catch {
          /* raw line */
        }
        if (seen.has(message) || seen.size >= 10) continue
        seen.add(message)
        ctx.diagnostic(`service error: ${line.slice(0, 1500)}`)
      }
    }

    assert.equal(service.kills, 2, 'the service was killed twice')
    assert.ok(
      ops.filter((o) => o.attempts.some((a) => a.outcome === 'network')).length > 0,
      'some requests were in flight when the service died',
    )
    assert.equal(
      findings.total,
      0,
      `exactly once under failure (seed ${seed}):\n  ${findings.summary()}`,
    )
  })
})
