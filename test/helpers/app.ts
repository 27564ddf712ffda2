import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { exportJWK, generateKeyPair } from 'jose'
import type { DestinationStream } from 'pino'
import { buildApp } from '../../src/app.js'
import type { AppDeps } from '../../src/app-deps.js'
import { loadConfig } from '../../src/config.js'
import type { DbHandle } from '../../src/db/client.js'
import type { JobRegistry } from '../../src/jobs/registry.js'
import { ManualClock } from '../../src/lib/clock.js'
import { createLogger } from '../../src/lib/logger.js'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import type { ServiceModule } from '../../src/modules/index.js'
import { SCOPES } from '../../src/modules/oauth/scopes.js'
import type { ProcessorDefinition } from '../../src/processors/port.js'
import { openRuntime } from '../../src/runtime.js'
import { freshDatabaseUrl, migratedPgliteImage } from './db.js'

export const BASE_URL = 'http://svc.test'
export const TOKEN_URL = `${BASE_URL}/oauth/token`
export const OPERATOR_TOKEN = 'op_test_operator_token'

export interface TestApp {
  app: FastifyInstance
  deps: AppDeps
  clock: ManualClock
  handle: DbHandle
  /** The job handlers and schedules of every module, as the worker gets them (`new JobRunner(t.deps, t.jobs)`). */
  jobs: JobRegistry
  close(): Promise<void>
  /** A call to the operator API; throws unless it succeeds. */
  operator<T = any>(method: string, url: string, body?: unknown): Promise<T>
  /** A /v1 call with a token. */
  api(
    token: string,
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>
}

export interface TestAppOptions {
  env?: Record<string, string>
  /** Runs after the modules are registered and before the app is ready: tests add routes of their own here. */
  beforeReady?: (app: FastifyInstance) => void | Promise<void>
  /** Where the service logger writes (JSON lines); set LOG_LEVEL in `env` to see anything. */
  logDestination?: DestinationStream
  /** The modules whose routes are mounted, in order (default: `MODULES`). */
  modules?: readonly ServiceModule[]
  /** The processors served (default: `PROCESSORS`): a test adds one of its own without touching the list. */
  processors?: readonly ProcessorDefinition[]
}

/** Boots the real application on a database of its own, with a clock the test can move. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await freshDatabaseUrl()
  const env: Record<string, string> = {
    BASE_URL,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-test-')),
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
    SVC_SEED_DEMO: 'false',
    SVC_DISABLE_WORKER: 'true',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_SANDBOX: '100000',
    RATE_LIMIT_PRODUCTION: '100000',
    RATE_LIMIT_POLLING: '100000',
    WEBHOOK_URL_POLICY: 'allow_private',
    CARD_ISSUE_DELAY_MS: '0',
    // An event stream ends after this long, so a call through app.inject (the security sweep) gets its answer.
    EVENT_STREAM_LIFETIME_MS: '300',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  }
  const config = loadConfig(env)
  const clock = new ManualClock()
  const log = options.logDestination
    ? createLogger(config.logLevel, options.logDestination)
    : undefined
  const pgliteImage = database.url ? undefined : await migratedPgliteImage()
  const { deps, handle, jobs } = await openRuntime(config, {
    clock,
    inMemory: true,
    pgliteImage,
    log,
    processors: options.processors,
  })
  const app = await buildApp(deps, options.modules)
  await options.beforeReady?.(app)
  await app.ready()
  const t: TestApp = {
    app,
    deps,
    clock,
    handle,
    jobs,
    async close() {
      await app.close()
      await handle.close()
      await database.drop()
    },
    async operator(method, url, body) {
      const res = await app.inject({
        method: method as never,
        url,
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
        ...(body !== undefined ? { payload: body as never } : {}),
      })
      if (res.statusCode >= 300)
        throw new Error(`operator ${method} ${url} → ${res.statusCode} ${res.body}`)
      return res.json()
    },
    api(token, method, url, body, headers = {}) {
      return app.inject({
        method: method as never,
        url,
        headers: { authorization: `Bearer ${token}`, ...headers },
        ...(body !== undefined ? { payload: body as never } : {}),
      })
    },
  }
  return t
}

export interface TestClient {
  organizationId: string
  clientId: string
  environment: 'sandbox' | 'production'
  privateJwk: Record<string, unknown>
  publicJwk: Record<string, unknown>
  programs: Record<string, any>
  /** Mints a fresh access token through the real token endpoint. */
  token(scope?: string): Promise<string>
}

export async function newKeyPair(
  alg: 'ES256' | 'RS256' = 'ES256',
  kid = 'k1',
): Promise<{ privateJwk: Record<string, unknown>; publicJwk: Record<string, unknown> }> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  return {
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg },
  }
}

export async function requestToken(
  t: TestApp,
  form: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form,
  })
}

/**
 * An organization with a client in one environment and programs on both simulated processors
 * (`programs.full`, `programs.basic`), ready to call the API.
 */
export async function createTenant(
  t: TestApp,
  options: {
    environment?: 'sandbox' | 'production'
    scopes?: string[]
    organizationId?: string
    ipAllowlist?: string[]
  } = {},
): Promise<TestClient> {
  const environment = options.environment ?? 'sandbox'
  const organizationId =
    options.organizationId ??
    (await t.operator('POST', '/operator/v1/organizations', { name: 'Test org' })).id
  const programs: Record<string, any> = {}
  if (!options.organizationId) {
    programs.full = await t.operator('POST', '/operator/v1/programs', {
      organization_id: organizationId,
      environment,
      name: 'Full',
      processor: 'sim_full',
      currencies: ['USD', 'EUR'],
    })
    programs.basic = await t.operator('POST', '/operator/v1/programs', {
      organization_id: organizationId,
      environment,
      name: 'Basic',
      processor: 'sim_basic',
      currencies: ['USD'],
    })
  }
  const keys = await newKeyPair()
  const client = await t.operator('POST', '/operator/v1/clients', {
    organization_id: organizationId,
    environment,
    label: 'test',
    scopes: options.scopes ?? [...SCOPES],
    jwks: { keys: [keys.publicJwk] },
    ...(options.ipAllowlist ? { ip_allowlist: options.ipAllowlist } : {}),
  })
  return {
    organizationId,
    clientId: client.id,
    environment,
    programs,
    ...keys,
    async token(scope?: string) {
      const assertion = await signClientAssertion({
        clientId: client.id,
        privateJwk: keys.privateJwk,
        audience: TOKEN_URL,
        nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
      })
      const res = await requestToken(t, tokenRequestBody(assertion, scope))
      if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`)
      return res.json().access_token as string
    },
  }
}

/** Serves the test app on a real port of 127.0.0.1 (for browsers, the CLI and other real clients); answers its origin. */
export async function listenOnPort(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const address = t.app.server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}
