import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createServer, type Server } from 'node:http'
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Config } from '../config.js'
import { safeEqual } from '../lib/crypto.js'
import { newId } from '../lib/ids.js'
import { envelope } from './error-handler.js'
import { ApiError } from './errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's Prometheus registry, for `serveMetrics` on METRICS_PORT. */
    metricsRegistry: Registry
  }
}

/** `/metrics` on the API port answers only the operator token, compared in constant time. */
function requireOperatorToken(operatorToken: string) {
  const how =
    '/metrics takes "Authorization: Bearer <operator token>" (SVC_OPERATOR_TOKEN), or set METRICS_PORT to serve it ' +
    'on a port of its own for your scraper.'
  return async (req: FastifyRequest): Promise<void> => {
    const header = req.headers.authorization
    if (!header) throw new ApiError('missing_credentials', { message: how })
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!match || !safeEqual(match[1], operatorToken))
      throw new ApiError('invalid_access_token', { message: `Not the operator token: ${how}` })
  }
}

/**
 * Prometheus metrics: request counts and latency by route template (never by raw path, which holds ids). With
 * METRICS_PORT unset `/metrics` is served on the API port and needs the operator token; with it set the API port
 * has no `/metrics` (404 like any unknown path) and `serveMetrics` serves it on that port without a token.
 */
export function installMetrics(
  app: FastifyInstance,
  config: Pick<Config, 'operatorToken' | 'metricsPort'>,
): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'] as const,
    registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  })
  app.addHook('onResponse', async (req, reply) => {
    const route = req.is404 ? 'not_found' : (req.routeOptions.url ?? 'unknown')
    requests.inc({ method: req.method, route, status: String(reply.statusCode) })
    duration.observe({ method: req.method, route }, reply.elapsedTime / 1000)
  })
  app.decorate('metricsRegistry', registry)
  if (config.metricsPort === null) {
    app.get(
      '/metrics',
      {
        config: { public: true },
        schema: { hide: true },
        onRequest: requireOperatorToken(config.operatorToken),
      },
      async (_req, reply) => {
        reply.type(registry.contentType)
        return registry.metrics()
      },
    )
  }
  return registry
}

/**
 * `/metrics` on METRICS_PORT: `GET /metrics` without a token, for a scraper on the monitoring network; anything
 * else answers `404 not_found` in the envelope. Resolves once it listens; fails when the port is taken.
 */
export async function serveMetrics(
  registry: Registry,
  config: Pick<Config, 'metricsPort' | 'host' | 'baseUrl'>,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      const requestId = newId('req')
      const body = JSON.stringify(
        envelope(
          new ApiError('not_found', { message: 'This port serves GET /metrics only.' }),
          requestId,
          config.baseUrl,
        ),
      )
      res
        .writeHead(404, {
          'content-type': 'application/json; charset=utf-8',
          'svc-request-id': requestId,
        })
        .end(body)
      return
    }
    registry.metrics().then(
      (text) =>
        res
          .writeHead(200, { 'content-type': registry.contentType })
          .end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500).end(),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.metricsPort ?? 0, config.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return server
}
