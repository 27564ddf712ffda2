import type { FastifyInstance } from 'fastify'
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** Prometheus metrics: request counts and latency by route template (never by raw path, which holds ids). */
export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'svc_http_requests_total', help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const, registers: [registry],
  })
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds', help: 'HTTP request duration',
    labelNames: ['method', 'route'] as const, registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  })
  app.addHook('onResponse', async (req, reply) => {
    const route = req.is404 ? 'not_found' : (req.routeOptions.url ?? 'unknown')
    requests.inc({ method: req.method, route, status: String(reply.statusCode) })
    duration.observe({ method: req.method, route }, reply.elapsedTime / 1000)
  })
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType)
    return registry.metrics()
  })
  return registry
}
