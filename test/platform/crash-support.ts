/**
 * Support for the crash test (test/platform/crash-exactly-once.test.ts): a real `svc serve` child process on
 * PostgreSQL that the test can SIGKILL and start again on the same database and port, a tenant set up over
 * HTTP, and a sender that retries a request with the same Idempotency-Key / client_transaction_id and body
 * until it has a final answer.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { exportJWK, generateKeyPair } from 'jose'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import { SCOPES } from '../../src/modules/oauth/scopes.js'

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A seeded generator, so a run can be repeated (CRASH_SEED). */
export function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

// ---------------------------------------------------------------------------------------------------------
// The service as a child process
// ---------------------------------------------------------------------------------------------------------

/**
 * `node bin/svc.js serve` on one database and port. `start()` spawns it and waits for `/readyz`; `kill()` is
 * SIGKILL (no shutdown hook runs, open transactions die with their connections); `start()` again is the
 * restart on the same database and port. `stop()` is for the after hook: it kills whatever still runs.
 */
export class ServiceProcess {
  readonly baseUrl: string
  readonly operatorToken = `op_crash_${randomBytes(12).toString('hex')}`
  private child: ChildProcess | null = null
  private readonly env: Record<string, string>
  /** The last lines the current child wrote (both streams), for the failure message of a start that does not come up. */
  private output: string[] = []
  /** Error lines (pino level ≥ 50, or anything that is not a log line) of every start, tagged with the start's number. */
  readonly errors: string[] = []
  starts = 0
  kills = 0

  constructor(
    readonly databaseUrl: string,
    readonly port: number,
    extraEnv: Record<string, string> = {},
  ) {
    this.baseUrl = `http://127.0.0.1:${port}`
    this.env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: this.baseUrl,
      DATABASE_URL: databaseUrl,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-crash-')),
      SVC_MASTER_KEY: randomBytes(32).toString('base64'),
      SVC_OPERATOR_TOKEN: this.operatorToken,
      SVC_SEED_DEMO: 'false',
      CARD_ISSUE_DELAY_MS: '0',
      RATE_LIMIT_SANDBOX: '1000000',
      RATE_LIMIT_PRODUCTION: '1000000',
      RATE_LIMIT_POLLING: '1000000',
      WEBHOOK_URL_POLICY: 'allow_private',
      HTTP_PROCESSES: '1',
      DATABASE_CONNECTIONS: '10',
      LOG_LEVEL: process.env.CRASH_LOG_LEVEL ?? 'error',
      ...extraEnv,
    }
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** Spawns the service and resolves once `/readyz` answers 200 (database reachable, migrations applied). */
  async start(timeoutMs = 30_000): Promise<number> {
    if (this.running) throw new Error('the service is already running')
    const startedAt = Date.now()
    this.output = []
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/svc.js'), 'serve'], {
      cwd: REPO_ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child = child
    this.starts++
    const start = this.starts
    const keep = (stream: 'stdout' | 'stderr') => {
      let partial = ''
      return (chunk: Buffer) => {
        const parts = (partial + chunk.toString('utf8')).split('\n')
        partial = parts.pop() ?? ''
        collect(stream, parts.filter(Boolean))
      }
    }
    const collect = (stream: 'stdout' | 'stderr', lines: string[]) => {
      this.output.push(...lines)
      if (this.output.length > 80) this.output.splice(0, this.output.length - 80)
      for (const line of lines) {
        // Log lines (JSON) at error level or above; anything else only from stderr (stdout carries the banner).
        let level = stream === 'stderr' ? 60 : 0
        try {
          level = Number(JSON.parse(line).level ?? level)
        } catch {
          /* not a log line */
        }
        if (level >= 50 && this.errors.length < 500)
          this.errors.push(`[start ${start}] ${line.slice(0, 2000)}`)
      }
    }
    child.stdout!.on('data', keep('stdout'))
    child.stderr!.on('data', keep('stderr'))
    let exited: string | null = null
    child.once('exit', (code, signal) => {
      exited = `exited (code ${code}, signal ${signal})`
    })
    while (Date.now() - startedAt < timeoutMs) {
      if (exited) throw new Error(`svc serve ${exited} while starting:\n${this.output.join('\n')}`)
      try {
        const res = await fetch(`${this.baseUrl}/readyz`, { signal: AbortSignal.timeout(1000) })
        await res.arrayBuffer()
        if (res.status === 200) return Date.now() - startedAt
      } catch {
        // not listening yet
      }
      await sleep(50)
    }
    await this.stop()
    throw new Error(
      `svc serve did not become ready within ${timeoutMs} ms:\n${this.output.join('\n')}`,
    )
  }

  /** SIGKILL, and waits until the process is gone (so the port is free for the restart). */
  async kill(): Promise<void> {
    const child = this.child
    if (!child || !this.running) return
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGKILL')
    this.kills++
    await gone
  }

  /** For after hooks: the child never outlives the test. */
  async stop(): Promise<void> {
    const child = this.child
    if (!child) return
    if (this.running) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.kill('SIGKILL')
      await Promise.race([gone, sleep(5000)])
    }
    this.child = null
  }

  /** Synchronous last resort (process 'exit' handler). */
  killSync(): void {
    if (this.running)
      try {
        this.child!.kill('SIGKILL')
      } catch {
        /* already gone */
      }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Plain HTTP calls (setup and verification)
// ---------------------------------------------------------------------------------------------------------

export interface HttpAnswer {
  status: number
  headers: Headers
  text: string
  json: any
}

export async function http(
  baseUrl: string,
  method: string,
  path: string,
  options: {
    bearer?: string
    body?: unknown
    headers?: Record<string, string>
    timeoutMs?: number
  } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  })
  const text = await res.text()
  let json: any = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = null
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** A call that must answer `expected`; anything else throws with the answer in the message. */
export async function must(
  baseUrl: string,
  method: string,
  path: string,
  expected: number,
  options: Parameters<typeof http>[3] = {},
): Promise<any> {
  const res = await http(baseUrl, method, path, options)
  if (res.status !== expected)
    throw new Error(`${method} ${path} → ${res.status} (expected ${expected}) ${res.text}`)
  return res.json
}

// ---------------------------------------------------------------------------------------------------------
// Tenant setup over HTTP
// ---------------------------------------------------------------------------------------------------------

export interface CrashTenant {
  organizationId: string
  programId: string
  clientId: string
  token: string
  accounts: { id: string; cardholderId: string; cardId: string }[]
}

/** The sandbox client's access token through the real token endpoint (aud = BASE_URL/oauth/token). */
async function mintToken(
  svc: ServiceProcess,
  clientId: string,
  privateJwk: Record<string, unknown>,
): Promise<string> {
  const assertion = await signClientAssertion({
    clientId,
    privateJwk,
    audience: `${svc.baseUrl}/oauth/token`,
  })
  const res = await fetch(`${svc.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: tokenRequestBody(assertion),
  })
  const body = (await res.json()) as Record<string, string>
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`)
  return body.access_token
}

/**
 * Through the operator API and /v1: an organization, a sim_full sandbox program (USD), an OAuth client with
 * a freshly generated ES256 key, and `accountCount` approved cardholders each with a USD account credited
 * `funding` and an active virtual card on it. No Idempotency-Key is used here.
 */
export async function setUpTenant(
  svc: ServiceProcess,
  accountCount: number,
  funding: number,
): Promise<CrashTenant> {
  const op = { bearer: svc.operatorToken }
  const org = await must(svc.baseUrl, 'POST', '/operator/v1/organizations', 201, {
    ...op,
    body: { name: 'Crash test' },
  })
  const program = await must(svc.baseUrl, 'POST', '/operator/v1/programs', 201, {
    ...op,
    body: {
      organization_id: org.id,
      environment: 'sandbox',
      name: 'Crash full',
      processor: 'sim_full',
      currencies: ['USD'],
    },
  })
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const privateJwk = { ...(await exportJWK(privateKey)), kid: 'crash-1', alg: 'ES256' }
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'crash-1', alg: 'ES256', use: 'sig' }
  const scopes = SCOPES.filter((s) => !s.startsWith('authentications:'))
  const client = await must(svc.baseUrl, 'POST', '/operator/v1/clients', 201, {
    ...op,
    body: {
      organization_id: org.id,
      environment: 'sandbox',
      label: 'crash test',
      scopes,
      jwks: { keys: [publicJwk] },
    },
  })
  const token = await mintToken(svc, client.id, privateJwk)
  const v1 = { bearer: token }
  const accounts: CrashTenant['accounts'] = []
  await Promise.all(
    Array.from({ length: accountCount }, async (_, i) => {
      const holder = await must(svc.baseUrl, 'POST', '/v1/cardholders', 201, {
        ...v1,
        body: {
          type: 'individual',
          first_name: 'Crash',
          last_name: `Holder${i}`,
          email: `crash.${i}.${randomBytes(4).toString('hex')}@example.com`,
          address: {
            line1: '1 Main St',
            city: 'Springfield',
            postal_code: '12345',
            country: 'USA',
          },
          identity_document: { type: 'passport', number: `P${i}${randomBytes(3).toString('hex')}` },
        },
      })
      await must(svc.baseUrl, 'POST', `/v1/cardholders/${holder.id}/kyc`, 201, {
        ...v1,
        body: {
          status: 'approved',
          provider: 'acme-kyc',
          verified_at: new Date(Date.now() - 60_000).toISOString(),
          identity: { legal_name: `Crash Holder${i}`, nationality: 'GBR' },
        },
      })
      const account = await must(svc.baseUrl, 'POST', '/v1/accounts', 201, {
        ...v1,
        body: { program_id: program.id, cardholder_id: holder.id, currency: 'USD' },
      })
      await must(svc.baseUrl, 'POST', `/v1/accounts/${account.id}/credit`, 200, {
        ...v1,
        body: { amount: funding, reference: 'crash-funding' },
      })
      const card = await must(svc.baseUrl, 'POST', '/v1/cards', 201, {
        ...v1,
        body: {
          cardholder_id: holder.id,
          account_id: account.id,
          form_factor: 'virtual',
          card_type: 'prepaid',
          embossed_name: 'CRASH HOLDER',
          delivery_address: {
            name: 'Crash Holder',
            line1: '1 Main St',
            city: 'Springfield',
            postal_code: '12345',
            country: 'USA',
          },
        },
      })
      const issued = await must(svc.baseUrl, 'POST', `/v1/simulate/cards/${card.id}/issue`, 200, v1)
      if (issued.status !== 'active')
        throw new Error(`card ${card.id} is ${issued.status} after issue`)
      accounts.push({ id: account.id, cardholderId: holder.id, cardId: card.id })
    }),
  )
  accounts.sort((a, b) => a.id.localeCompare(b.id))
  return { organizationId: org.id, programId: program.id, clientId: client.id, token, accounts }
}

// ---------------------------------------------------------------------------------------------------------
// Requests retried until they have a final answer
// ---------------------------------------------------------------------------------------------------------

export type OpKind = 'credit' | 'debit' | 'authorize' | 'capture'
/** How a credit or debit is made idempotent. */
export type AdjustMode = 'key' | 'ctid' | 'both'

export interface Attempt {
  /** `network`, `5xx:<status>`, `in_progress`, `429`, or `final`. */
  outcome: string
  at: number
}

/** One logical request: sent with the same Idempotency-Key / client_transaction_id and body until it has a final answer. */
export interface Op {
  n: number
  phase: number
  kind: OpKind
  mode?: AdjustMode
  accountId: string
  cardId?: string
  /** The authorization a capture captures. */
  authorizationId?: string
  path: string
  body: Record<string, any>
  key: string | null
  /** The unique `reference` of a credit or debit, the unique merchant name of an authorization. */
  tag: string
  attempts: Attempt[]
  final: { status: number; json: any; text: string; replay: boolean } | null
  /** Why it has no final answer (the last transient outcome), when it ran out of time or attempts. */
  unresolved: string | null
}

/** Not a final answer: the request may not have run, or ran and its answer was lost; send it again. */
export function transientOutcome(status: number, json: any): string | null {
  if (status >= 500) return `5xx:${status}`
  if (status === 429) return '429'
  if (status === 409 && json?.error?.code === 'idempotency_request_in_progress')
    return 'in_progress'
  return null
}

export interface SendLimits {
  /** Absolute time after which no further attempt is made (read at every attempt: the caller may move it). */
  deadline: () => number
  maxAttempts: number
  attemptTimeoutMs: number
}

/** Sends `op` until a final answer, backing off (50 ms doubling to 800 ms, with jitter) after each transient outcome. */
export async function settle(
  baseUrl: string,
  token: string,
  op: Op,
  limits: SendLimits,
  random: () => number,
): Promise<void> {
  let backoff = 50
  while (op.attempts.length < limits.maxAttempts) {
    if (Date.now() > limits.deadline()) break
    let outcome: string
    try {
      const res = await http(baseUrl, 'POST', op.path, {
        bearer: token,
        body: op.body,
        headers: op.key ? { 'idempotency-key': op.key } : {},
        timeoutMs: limits.attemptTimeoutMs,
      })
      outcome = transientOutcome(res.status, res.json) ?? 'final'
      if (outcome === 'final') {
        op.attempts.push({ outcome, at: Date.now() })
        op.final = {
          status: res.status,
          json: res.json,
          text: res.text,
          replay: res.headers.get('idempotent-replay') === 'true',
        }
        op.unresolved = null
        return
      }
    } catch {
      outcome = 'network'
    }
    op.attempts.push({ outcome, at: Date.now() })
    op.unresolved = outcome
    await sleep(backoff / 2 + random() * backoff)
    backoff = Math.min(800, backoff * 2)
  }
  op.unresolved ??= 'not sent'
}

/** What each attempt of a request got, runs counted: `network×12,in_progress×3,final`. */
export function history(op: Op): string {
  const runs: [string, number][] = []
  for (const a of op.attempts) {
    const last = runs[runs.length - 1]
    if (last && last[0] === a.outcome) last[1]++
    else runs.push([a.outcome, 1])
  }
  return runs.map(([outcome, n]) => (n > 1 ? `${outcome}×${n}` : outcome)).join(',')
}

/** Runs `work` over `items` with at most `width` at a time. */
export async function pool<T>(
  items: T[],
  width: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++])
    }),
  )
}

/** Every item of a /v1 list, page after page (100 at a time). */
export async function listAll(baseUrl: string, token: string, path: string): Promise<any[]> {
  const items: any[] = []
  let cursor: string | null = null
  for (let page = 0; page < 1000; page++) {
    const sep = path.includes('?') ? '&' : '?'
    const body = await must(
      baseUrl,
      'GET',
      `${path}${sep}limit=100${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`,
      200,
      { bearer: token },
    )
    items.push(...body.data)
    if (!body.has_more) return items
    cursor = body.next_cursor
  }
  throw new Error(`${path}: more than 1000 pages`)
}
