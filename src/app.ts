import Fastify, { LogController, type FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { AppDeps } from './app-deps.js'
import { migrationsApplied } from './db/migrate.js'
import { installAuth } from './http/auth.js'
import {
  clientErrorHandler,
  frameworkErrorHandler,
  installConnectAnswer,
  installErrorHandling,
  installJsonParsing,
  installNotFoundGate,
  installUnparsableBodyRefusal,
} from './http/error-handler.js'
import { installIdempotency } from './http/idempotency.js'
import { installMethodIndex } from './http/method-index.js'
import { installMetrics } from './http/metrics.js'
import { installOpenApi } from './http/openapi.js'
import { installFilterEnvironmentCheck } from './http/ownership.js'
import { RateLimits } from './http/rate-limit.js'
import { lazySerializers } from './http/serialization.js'
import { installClosedQueries, validatorCompiler } from './http/validation.js'
import { newId } from './lib/ids.js'
import { MODULES, type ServiceModule } from './modules/index.js'

/** Path parameters as long as the request line allows (16 KiB): an over-long id is the resource's own not-found. */
const MAX_PARAM_LENGTH = 16 * 1024

export type App = FastifyInstance

/**
 * Builds the HTTP application from its dependencies and mounts the routes of `modules` (every module, in
 * list order, by default); `server.ts` only listens, tests use `app.inject`.
 */
export async function buildApp(
  deps: AppDeps,
  modules: readonly ServiceModule[] = MODULES,
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: () => newId('req'),
    frameworkErrors: frameworkErrorHandler(deps.config.baseUrl),
    clientErrorHandler: clientErrorHandler(deps.config.baseUrl, deps.config),
    // Bounded resources: the request line and headers must arrive within HEADERS_TIMEOUT_MS (10 s), the whole
    // request within REQUEST_TIMEOUT_MS (30 s); node checks every connection each `connectionsCheckingInterval`,
    // so the limits fire within about a second of those times (clientErrorHandler answers 408 request_timeout).
    requestTimeout: deps.config.requestTimeoutMs,
    http: {
      requestTimeout: deps.config.requestTimeoutMs,
      headersTimeout: deps.config.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(
        25,
        Math.min(1000, Math.floor(deps.config.headersTimeoutMs / 4)),
      ),
    },
    requestIdHeader: false,
    ajv: { customOptions: { strict: false } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH },
  }) as unknown as FastifyInstance

  const limits = await RateLimits.create(deps.config, deps.log)
  app.addHook('onClose', async () => {
    await limits.close()
  })

  const methods = installMethodIndex(app, MAX_PARAM_LENGTH)
  app.setValidatorCompiler(validatorCompiler)
  installClosedQueries(app)
  installJsonParsing(app)
  installErrorHandling(app, deps.config.baseUrl)
  installConnectAnswer(app)
  app.addHook('onRequest', async (req, reply) => {
    reply.header('Svc-Request-Id', req.id)
  })
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        req_id: req.id,
        method: req.method,
        route: req.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    )
  })
  await installOpenApi(app, deps.config.baseUrl)
  installMetrics(app, deps.config)
  app.decorate('trustedProxies', deps.config.trustedProxies)
  installAuth(app, deps, limits)
  installNotFoundGate(app, methods)
  installFilterEnvironmentCheck(app, deps)
  installIdempotency(app, deps)
  installUnparsableBodyRefusal(app)

  let ready = false
  const Status = (values: string[]) => ({
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: values } },
  })
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        tags: ['Platform'],
        summary: 'Liveness: the process is up (no token)',
        response: { 200: Status(['ok']) },
      },
    },
    async () => ({ status: 'ok' }),
  )
  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        tags: ['Platform'],
        summary: 'Readiness: the database answers and every migration is applied (no token)',
        response: {
          200: Status(['ready']),
          503: Status(['migrations_pending', 'database_unreachable']),
        },
      },
    },
    async (_req, reply) => {
      try {
        await sql`SELECT 1`.execute(deps.db)
        ready ||= await migrationsApplied(deps.db)
        if (!ready) return reply.code(503).send({ status: 'migrations_pending' })
        return { status: 'ready' }
      } catch {
        return reply.code(503).send({ status: 'database_unreachable' })
      }
    },
  )
  for (const m of modules) await m.routes?.(app, deps)
  return app
}
