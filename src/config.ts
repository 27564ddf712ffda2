import { parseCidr } from './http/ip.js'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { randomBase62 } from './lib/crypto.js'

export type Environment = 'sandbox' | 'production'
export const ENVIRONMENTS: readonly Environment[] = ['sandbox', 'production']

export interface RateLimitConfig {
  sandboxPerSecond: number
  productionPerSecond: number
  pollingPerSecond: number
}

/** Every setting of the service, parsed once from the environment. Nothing else reads `process.env`. */
export interface Config {
  port: number
  /** The interface to listen on: 127.0.0.1 unless HOST says otherwise (0.0.0.0 in a container). */
  host: string
  /** A port of its own for `/metrics`, without a token (on `host`); null: `/metrics` on `port`, operator token required. */
  metricsPort: number | null
  baseUrl: string
  /**
   * False when BASE_URL was not set and `baseUrl` is only the guess `http://localhost:$PORT`: the token
   * endpoint then also accepts as `aud` its URL as the caller reached it (see the oauth service). Only ever
   * false on the embedded database: with DATABASE_URL, BASE_URL is required.
   */
  baseUrlExplicit: boolean
  databaseUrl: string | null
  dataDir: string
  redisUrl: string | null
  /** Peers whose X-Forwarded-For is believed (CIDRs); empty (unset): no peer's, the peer is the address. */
  trustedProxies: string[]
  masterKey: Buffer
  operatorToken: string
  environments: Environment[]
  releases: Set<string>
  /** Per environment: the demo start-up lets sandbox reach plain-http local receivers (allow_local_http). */
  webhookUrlPolicy: Record<Environment, WebhookUrlPolicy>
  webhookRetryScheduleSeconds: number[]
  cardIssueDelayMs: number
  logLevel: string
  rateLimits: RateLimitConfig
  runWorker: boolean
  seedDemo: boolean
  /** `svc serve` on PostgreSQL: HTTP processes sharing the port (node:cluster); 1 on the embedded database. */
  httpProcesses: number
  /** PostgreSQL connections a `svc serve` node keeps in all, shared equally by its HTTP processes. */
  databaseConnections: number
  /** Request body limit for every route but the KYC upload. */
  bodyLimitBytes: number
  kycBodyLimitBytes: number
  /** The whole request (line, headers and body) must arrive within this many ms (node's `requestTimeout`). */
  requestTimeoutMs: number
  /** The request line and headers must arrive within this many ms (node's `headersTimeout`). */
  headersTimeoutMs: number
  /** `GET /v1/events/stream` (docs/decisions/event-stream-polling.md). */
  eventStream: EventStreamConfig
}

export interface EventStreamConfig {
  /** How often an open stream reads the events table for new rows. */
  pollMs: number
  /** A comment line is sent after this long without an event, so proxies and clients see the connection alive. */
  heartbeatMs: number
  /** A stream is closed after this long (the client reconnects with Last-Event-ID, and its token is checked again). */
  lifetimeMs: number
  /** Open streams one process serves at once; more answer 429 rate_limited. */
  maxConnections: number
  /** Open streams of one organization's environment in one process. */
  maxPerScope: number
  /**
   * A stream whose connection is full (its reader stopped reading) reads no more; once more events than this wait
   * for it, it is cut off (the reader resumes with Last-Event-ID).
   */
  maxBehind: number
}

/**
 * `public`: HTTPS to public hosts only (the interface's rule). `allow_private`: also http:// and private hosts
 * (tests, local development). `allow_local_http`: the interface's rule, except that plain http:// reaches a
 * non-public host (a receiver on the developer's machine); the demo start-up's sandbox default.
 */
export type WebhookUrlPolicy = 'public' | 'allow_private' | 'allow_local_http'

export const DEFAULT_RETRY_SCHEDULE = [60, 300, 1800, 7200, 18000, 36000, 43200]

export class ConfigError extends Error {}

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0)
    throw new ConfigError(`${name} must be a non-negative number, got "${raw}"`)
  return n
}

function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  return ['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())
}

/** Reads a generated secret from DATA_DIR, creating it on first use (embedded default only). */
function generatedSecret(dataDir: string, file: string, make: () => string): string {
  const path = join(dataDir, file)
  if (existsSync(path)) return readFileSync(path, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true })
  const value = make()
  writeFileSync(path, `${value}\n`, { mode: 0o600 })
  return value
}

function parseMasterKey(raw: string): Buffer {
  const key = Buffer.from(raw, 'base64')
  if (key.length !== 32) throw new ConfigError('SVC_MASTER_KEY must be 32 bytes, base64 encoded')
  return key
}

/**
 * The PostgreSQL connections one HTTP process keeps: the node's DATABASE_CONNECTIONS shared among its HTTP
 * processes, so more processes do not mean more backends competing for the same cores; at least 2 (a
 * transaction and a lookup beside it).
 */
export function databasePoolSize(
  config: Pick<Config, 'databaseConnections' | 'httpProcesses'>,
): number {
  return Math.max(2, Math.ceil(config.databaseConnections / config.httpProcesses))
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intVar(env, 'PORT', 8080)
  const dataDir = resolve(env.DATA_DIR || './.data')
  const databaseUrl = env.DATABASE_URL || null
  const embedded = databaseUrl === null
  // A deployment on PostgreSQL is a real one: its token audience is its public address, never the Host header
  // a caller chooses (docs/decisions/audience-without-base-url.md).
  if (!embedded && !env.BASE_URL) {
    throw new ConfigError(
      'BASE_URL is required when DATABASE_URL is set: the public address callers use, e.g. https://api.example.com (it is the token endpoint audience)',
    )
  }
  if (env.BASE_URL && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(env.BASE_URL)) {
    throw new ConfigError(
      `BASE_URL must be an absolute http:// or https:// URL without query or fragment, got "${env.BASE_URL}"`,
    )
  }

  let masterKey: Buffer
  if (env.SVC_MASTER_KEY) masterKey = parseMasterKey(env.SVC_MASTER_KEY)
  else if (embedded)
    masterKey = parseMasterKey(
      generatedSecret(dataDir, 'master.key', () => randomBytes(32).toString('base64')),
    )
  else
    throw new ConfigError(
      'SVC_MASTER_KEY is required when DATABASE_URL is set (every node must share it)',
    )

  let operatorToken: string
  if (env.SVC_OPERATOR_TOKEN) operatorToken = env.SVC_OPERATOR_TOKEN
  else if (embedded)
    operatorToken = generatedSecret(dataDir, 'operator-token', () => `op_${randomBase62(32)}`)
  else throw new ConfigError('SVC_OPERATOR_TOKEN is required when DATABASE_URL is set')

  const environments = (env.SVC_ENVIRONMENTS || 'sandbox,production')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  for (const e of environments) {
    if (!ENVIRONMENTS.includes(e as Environment))
      throw new ConfigError(`SVC_ENVIRONMENTS: unknown environment "${e}"`)
  }

  const schedule = env.WEBHOOK_RETRY_SCHEDULE
    ? env.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim()))
    : DEFAULT_RETRY_SCHEDULE
  if (schedule.some((n) => !Number.isFinite(n) || n < 0))
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds')

  const policy = env.WEBHOOK_URL_POLICY
  if (
    policy &&
    policy !== 'public' &&
    policy !== 'allow_private' &&
    policy !== 'allow_local_http'
  ) {
    throw new ConfigError('WEBHOOK_URL_POLICY must be public, allow_private or allow_local_http')
  }
  const seedDemo = boolVar(env, 'SVC_SEED_DEMO', embedded)
  const httpProcesses = intVar(env, 'HTTP_PROCESSES', 1)
  if (!Number.isInteger(httpProcesses) || httpProcesses < 1 || httpProcesses > 64)
    throw new ConfigError('HTTP_PROCESSES must be an integer from 1 to 64')
  // PGlite lives inside one process: only that process can serve requests.
  if (httpProcesses > 1 && embedded)
    throw new ConfigError(
      'HTTP_PROCESSES above 1 needs DATABASE_URL (PostgreSQL); the embedded database belongs to one process',
    )
  const databaseConnections = intVar(env, 'DATABASE_CONNECTIONS', 20)
  if (
    !Number.isInteger(databaseConnections) ||
    databaseConnections < 1 ||
    databaseConnections > 1000
  )
    throw new ConfigError('DATABASE_CONNECTIONS must be an integer from 1 to 1000')
  // Set explicitly, the policy covers every environment; unset, the demo start-up lets sandbox reach local
  // receivers over plain http while every other URL follows the interface's rule.
  const webhookUrlPolicy: Record<Environment, WebhookUrlPolicy> = policy
    ? { sandbox: policy as WebhookUrlPolicy, production: policy as WebhookUrlPolicy }
    : { sandbox: seedDemo ? 'allow_local_http' : 'public', production: 'public' }

  const requestTimeoutMs = intVar(env, 'REQUEST_TIMEOUT_MS', 30_000)
  const headersTimeoutMs = intVar(env, 'HEADERS_TIMEOUT_MS', 10_000)
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1)
    throw new ConfigError('REQUEST_TIMEOUT_MS must be a positive integer (milliseconds)')
  if (!Number.isInteger(headersTimeoutMs) || headersTimeoutMs < 1)
    throw new ConfigError('HEADERS_TIMEOUT_MS must be a positive integer (milliseconds)')
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError(
      'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)',
    )

  const metricsPort = env.METRICS_PORT ? intVar(env, 'METRICS_PORT', 0) : null
  if (
    metricsPort !== null &&
    (!Number.isInteger(metricsPort) ||
      metricsPort < 1 ||
      metricsPort > 65535 ||
      metricsPort === port)
  ) {
    throw new ConfigError(
      `METRICS_PORT must be a port from 1 to 65535 other than PORT (${port}), got "${env.METRICS_PORT}"`,
    )
  }

  return {
    port,
    host: env.HOST || '127.0.0.1',
    metricsPort,
    baseUrl: (env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    baseUrlExplicit: Boolean(env.BASE_URL),
    databaseUrl,
    dataDir,
    redisUrl: env.REDIS_URL || null,
    trustedProxies: trustedProxiesOf(env.TRUSTED_PROXIES),
    masterKey,
    operatorToken,
    environments: environments as Environment[],
    releases: new Set(
      (env.SVC_RELEASES || '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    webhookUrlPolicy,
    webhookRetryScheduleSeconds: schedule,
    cardIssueDelayMs: intVar(env, 'CARD_ISSUE_DELAY_MS', 1000),
    logLevel: env.LOG_LEVEL || 'info',
    rateLimits: {
      sandboxPerSecond: intVar(env, 'RATE_LIMIT_SANDBOX', 25),
      productionPerSecond: intVar(env, 'RATE_LIMIT_PRODUCTION', 100),
      pollingPerSecond: intVar(env, 'RATE_LIMIT_POLLING', 10),
    },
    runWorker: !boolVar(env, 'SVC_DISABLE_WORKER', false),
    seedDemo,
    httpProcesses,
    databaseConnections,
    bodyLimitBytes: 1024 * 1024,
    kycBodyLimitBytes: 85 * 1024 * 1024,
    requestTimeoutMs,
    headersTimeoutMs,
    eventStream: {
      pollMs: positiveInt(env, 'EVENT_STREAM_POLL_MS', 250),
      heartbeatMs: positiveInt(env, 'EVENT_STREAM_HEARTBEAT_MS', 15_000),
      lifetimeMs: positiveInt(env, 'EVENT_STREAM_LIFETIME_MS', 15 * 60_000),
      maxConnections: positiveInt(env, 'EVENT_STREAM_MAX_CONNECTIONS', 200),
      maxPerScope: positiveInt(env, 'EVENT_STREAM_MAX_PER_ENVIRONMENT', 10),
      maxBehind: positiveInt(env, 'EVENT_STREAM_MAX_BEHIND', 1000),
    },
  }
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = intVar(env, name, fallback)
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError(`${name} must be a positive integer`)
  return value
}

/** `TRUSTED_PROXIES`: comma-separated CIDRs (or addresses) of the proxies in front of the service; unset: none. */
function trustedProxiesOf(value: string | undefined): string[] {
  if (!value || value.trim() === '') return []
  const cidrs = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  for (const cidr of cidrs) {
    if (!parseCidr(cidr))
      throw new ConfigError(`TRUSTED_PROXIES: ${cidr} is not an IP address or CIDR block`)
  }
  return cidrs
}
