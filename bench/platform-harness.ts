// Shared by the benchmarks: a real `svc serve` process on a fresh PostgreSQL database, a tenant to call it
// with, fast client assertions, and autocannon runs reduced to the figures the README reports.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto'
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { setPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The part of autocannon's options and result the benchmarks use (the package ships no types). */
export interface CannonOptions {
  url: string
  connections: number
  duration: number
  pipelining?: number
  /** Requests per second offered over all connections (open loop); unset: as fast as responses return. */
  overallRate?: number
  method?: string
  headers?: Record<string, string>
  body?: string
  requests?: {
    method?: string
    path?: string
    headers?: Record<string, string>
    setupRequest?: (req: Record<string, unknown>) => Record<string, unknown>
  }[]
}
interface CannonResult {
  requests: { average: number; total: number }
  latency: { p50: number; p90: number; p99: number; average: number; max: number }
  non2xx: number
  errors: number
  timeouts: number
  duration: number
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  opts: CannonOptions,
) => Promise<CannonResult>

export interface Figures {
  name: string
  requests: number
  rps: number
  p50: number
  p90: number
  p99: number
  max: number
  failures: number
  /** CPU milliseconds per request of the svc process, its PostgreSQL backends and this load generator (null: not measured). */
  cpuMs: number | null
  pgCpuMs?: number | null
  loadCpuMs?: number | null
  /** Every request's latency in ms, sorted (paced runs only): runs of one mix pooled give a steadier p99. */
  latencies?: number[]
}

interface CpuSnapshot {
  server: number
  postgres: Map<number, number> | null
  loadgen: number
}

async function cpuSnapshot(server: BenchServer): Promise<CpuSnapshot> {
  const { user, system } = process.cpuUsage()
  return {
    server: server.cpuSeconds(),
    postgres: await server.postgresCpuSeconds(),
    loadgen: (user + system) / 1e6,
  }
}

/** What one load run produced, before CPU accounting. */
export interface RunResult {
  requests: number
  durationSeconds: number
  p50: number
  p90: number
  p99: number
  max: number
  failures: number
  latencies?: number[]
}

/** Runs a load generator between two CPU snapshots and turns the result into the figures we publish. */
export async function measure(
  name: string,
  server: BenchServer | undefined,
  run: () => Promise<RunResult>,
): Promise<Figures> {
  const before = server ? await cpuSnapshot(server) : null
  const r = await run()
  const after = server ? await cpuSnapshot(server) : null
  const perRequest = (seconds: number) =>
    Math.round(((seconds * 1000) / Math.max(1, r.requests)) * 100) / 100
  let pgCpuMs: number | null = null
  if (before?.postgres && after?.postgres) {
    let sum = 0
    for (const [pid, secs] of after.postgres) sum += secs - (before.postgres.get(pid) ?? 0)
    pgCpuMs = perRequest(sum)
  }
  return {
    name,
    requests: r.requests,
    rps: Math.round(r.requests / r.durationSeconds),
    p50: r.p50,
    p90: r.p90,
    p99: r.p99,
    max: r.max,
    failures: r.failures,
    cpuMs: before && after ? perRequest(after.server - before.server) : null,
    pgCpuMs,
    loadCpuMs: before && after ? perRequest(after.loadgen - before.loadgen) : null,
    ...(r.latencies ? { latencies: r.latencies } : {}),
  }
}

/** Runs autocannon (closed loop: each connection sends its next request when the answer arrives). */
export async function cannon(
  name: string,
  options: CannonOptions,
  server?: BenchServer,
): Promise<Figures> {
  return measure(name, server, async () => {
    const r = await autocannon(options)
    return {
      requests: r.requests.total,
      durationSeconds: r.duration,
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      max: r.latency.max,
      failures: r.non2xx + r.errors + r.timeouts,
    }
  })
}

export function table(rows: Figures[]): string {
  const head =
    '| run | requests | req/s | p50 ms | p90 ms | p99 ms | max ms | failures | CPU ms/req: svc | PostgreSQL | load generator |\n' +
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  const v = (x: number | null | undefined) => x ?? '–'
  return [
    head,
    ...rows.map(
      (f) =>
        `| ${f.name} | ${f.requests} | ${f.rps} | ${f.p50} | ${f.p90} | ${f.p99} | ${f.max} | ${f.failures} | ${v(f.cpuMs)} | ${v(f.pgCpuMs)} | ${v(f.loadCpuMs)} |`,
    ),
  ].join('\n')
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number }
        s.close(() => resolve(port))
      })
      .on('error', reject)
  })
}

export interface BenchServer {
  baseUrl: string
  pid: number
  /** The server's own database (created for this run, dropped by stop()). */
  databaseUrl: string
  logFile: string
  /** CPU seconds (user + system) the server process has used so far: per-request cost holds up on a busy machine. */
  cpuSeconds(): number
  /** CPU seconds of each PostgreSQL backend serving the bench database, by pid (null when PostgreSQL is not local). */
  postgresCpuSeconds(): Promise<Map<number, number> | null>
  /** Bytes of WAL the whole PostgreSQL cluster has written so far: the difference over a run is the run's write volume. */
  walBytes(): Promise<number>
  /**
   * Writes out what earlier work left dirty (a PostgreSQL checkpoint, then the kernel's page cache), so a timed
   * run does not pay for the writes of the setup or of the run before it.
   */
  settle(): Promise<void>
  operator<T = any>(method: string, path: string, body?: unknown): Promise<T>
  stop(): Promise<void>
}

/**
 * The PostgreSQL server the benchmarks run against, as an admin URL: BENCH_DATABASE_URL, else the local server
 * over TCP, as a service reaches a database on another host. The Unix socket of a server on the same machine
 * (`postgres://postgres@localhost:5432/postgres?host=/var/run/postgresql`) works too, pgbench included.
 */
export function benchDatabaseUrl(): string {
  return process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
}

/** The host a URL reaches: the `host` parameter (a socket directory) when given, else its hostname. */
function hostOf(url: string): string {
  const u = new URL(url)
  return u.searchParams.get('host') ?? u.hostname
}

/** Whether PostgreSQL runs on this machine, so its backends' CPU can be read from /proc. */
export function isLocalDatabase(url: string): boolean {
  const host = hostOf(url)
  return host.startsWith('/') || ['127.0.0.1', 'localhost', '[::1]'].includes(host)
}

/** Connection options for PostgreSQL's own command-line tools (createdb, pgbench), the same transport as `url`. */
export function pgToolArgs(url: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const u = new URL(url)
  return {
    args: [
      '-h',
      hostOf(url),
      '-p',
      u.port || '5432',
      '-U',
      decodeURIComponent(u.username || 'postgres'),
    ],
    env: { ...process.env, PGPASSWORD: decodeURIComponent(u.password) },
  }
}

/**
 * Starts `svc serve` as its own process on a new database beside `benchDatabaseUrl()` (or on `options.database`), with rate limits
 * lifted and request logging off unless `env` says otherwise.
 */
export async function startServer(
  env: Record<string, string> = {},
  options: { database?: string } = {},
): Promise<BenchServer> {
  const admin = benchDatabaseUrl()
  // `database`: an existing database of the same server, used as it is and kept by stop() (the scale benchmark's seed).
  const dbName = options.database ?? `svc_bench_${randomBytes(5).toString('hex')}`
  if (!options.database) await adminQuery(admin, `CREATE DATABASE ${dbName}`)
  const dbUrl = new URL(admin)
  dbUrl.pathname = `/${dbName}`

  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`
  const logFile = join(mkdtempSync(join(tmpdir(), 'svc-bench-')), 'server.log')
  const out = openSync(logFile, 'a')
  const { DATABASE_URL: _ignored, ...inherited } = process.env
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []),
      join(ROOT, 'bin/svc.js'),
      'serve',
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', out, out],
      env: {
        ...inherited,
        PORT: String(port),
        HOST: '127.0.0.1',
        BASE_URL: baseUrl,
        DATABASE_URL: dbUrl.toString(),
        SVC_MASTER_KEY: randomBytes(32).toString('base64'),
        SVC_OPERATOR_TOKEN: operatorToken,
        SVC_SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_SANDBOX: '1000000',
        RATE_LIMIT_PRODUCTION: '1000000',
        RATE_LIMIT_POLLING: '1000000',
        ...env,
      },
    },
  )
  closeSync(out)
  raisePriority(child.pid!)
  raisePriority(process.pid)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`svc serve exited with ${child.exitCode}; see ${logFile}`)
    if (Date.now() > deadline) throw new Error(`svc serve not ready after 60 s; see ${logFile}`)
    const ok = await fetch(`${baseUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    await new Promise((r) => setTimeout(r, 200))
  }

  return {
    baseUrl,
    pid: child.pid!,
    databaseUrl: dbUrl.toString(),
    logFile,
    cpuSeconds: () => treeCpuSeconds(child.pid!),
    async postgresCpuSeconds() {
      const pids = await adminQuery(admin, 'SELECT pid FROM pg_stat_activity WHERE datname = $1', [
        dbName,
      ])
      if (!isLocalDatabase(admin)) return null
      const byPid = new Map<number, number>()
      for (const { pid } of pids) {
        raisePriority(pid)
        const secs = processCpuSeconds(pid)
        if (secs !== null) byPid.set(pid, secs)
      }
      return byPid
    },
    async walBytes() {
      const [row] = (await adminQuery(
        admin,
        `SELECT (pg_current_wal_lsn() - '0/0')::text AS bytes`,
      )) as unknown as { bytes: string }[]
      return Number(row.bytes)
    },
    async settle() {
      // CHECKPOINT needs a superuser or pg_checkpoint; without either, only the page cache is flushed.
      await adminQuery(admin, 'CHECKPOINT').catch(() => undefined)
      spawnSync('sync')
    },
    async operator(method, path, body) {
      const res = await fetch(baseUrl + path, {
        method,
        headers: {
          authorization: `Bearer ${operatorToken}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      })
      const json = await res.json()
      if (!res.ok)
        throw new Error(`operator ${method} ${path} → ${res.status} ${JSON.stringify(json)}`)
      return json
    },
    async stop() {
      child.kill('SIGTERM')
      await exited
      if (!options.database)
        await adminQuery(admin, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
    },
  }
}

/**
 * BENCH_PRIORITY (a nice value such as -10, root only) gives the server, its PostgreSQL backends and the
 * load generator precedence over other work on a shared machine, so figures approach those of an idle one.
 */
function raisePriority(pid: number): void {
  const nice = process.env.BENCH_PRIORITY
  if (nice) setPriority(pid, Number(nice))
}

/** CPU of the server and of the HTTP processes it forked (HTTP_PROCESSES), which end when it ends. */
function treeCpuSeconds(root: number): number {
  let total = processCpuSeconds(root) ?? 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === root) continue
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')
      if (Number(fields[1]) === root) total += (Number(fields[11]) + Number(fields[12])) / 100
    } catch {
      /* gone meanwhile */
    }
  }
  return total
}

function processCpuSeconds(pid: number): number | null {
  if (!existsSync(`/proc/${pid}/stat`)) return null
  // Fields 14 and 15 of /proc/PID/stat (utime, stime) in clock ticks, counted after the parenthesised command name.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

export async function adminQuery(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<{ pid: number }[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(text, values)).rows
  } finally {
    await c.end()
  }
}

export interface BenchClient {
  clientId: string
  tokenUrl: string
  key: KeyObject
  kid: string
  organizationId: string
  programIds: string[]
}

/** An organization with one sandbox program per simulated processor and an ES256 client holding every default scope. */
export async function createTenant(server: BenchServer): Promise<BenchClient> {
  const org = await server.operator('POST', '/operator/v1/organizations', {
    name: 'Bench organization',
  })
  const programs = []
  for (const processor of ['sim_full', 'sim_basic']) {
    programs.push(
      await server.operator('POST', '/operator/v1/programs', {
        organization_id: org.id,
        environment: 'sandbox',
        name: `Bench ${processor}`,
        processor,
        currencies: ['USD'],
      }),
    )
  }
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const kid = 'bench-1'
  const client = await server.operator('POST', '/operator/v1/clients', {
    organization_id: org.id,
    environment: 'sandbox',
    label: 'Bench client',
    jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' }] },
  })
  return {
    clientId: client.id,
    tokenUrl: `${server.baseUrl}/oauth/token`,
    key: privateKey,
    kid,
    organizationId: org.id,
    programIds: programs.map((p: { id: string }) => p.id),
  }
}

const b64url = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url')

/** A token request body with a fresh ES256 assertion, signed with node:crypto (far cheaper than the server's verification). */
export function tokenRequest(client: BenchClient): string {
  const now = Math.floor(Date.now() / 1000)
  const signingInput = `${b64url({ alg: 'ES256', typ: 'JWT', kid: client.kid })}.${b64url({
    iss: client.clientId,
    sub: client.clientId,
    aud: client.tokenUrl,
    iat: now,
    exp: now + 240,
    jti: randomUUID(),
  })}`
  const signature = sign('sha256', Buffer.from(signingInput), {
    key: client.key,
    dsaEncoding: 'ieee-p1363',
  }).toString('base64url')
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: `${signingInput}.${signature}`,
  }).toString()
}

/** One access token for the client, for the authenticated runs. */
export async function accessToken(client: BenchClient): Promise<string> {
  const res = await fetch(client.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: tokenRequest(client),
  })
  const body = (await res.json()) as { access_token?: string }
  if (!res.ok || !body.access_token)
    throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`)
  return body.access_token
}
