import FindMyWay from 'find-my-way'
import type { FastifyInstance } from 'fastify'

/** Which methods a path takes: what a request with another method is told (`405 method_not_allowed`, `Allow`). */
export interface MethodIndex {
  /**
   * The methods routed for `url`'s path that a caller may be told of, in a stable order: never an optional
   * operation (mounted per program, so it may not be there for this caller) nor, outside the sandbox, a simulator
   * route (which the other environments do not have). Empty when no such route has that path.
   */
  methodsOf(url: string, sandbox: boolean): string[]
}

/** What the index keeps of a route: whether a caller may always be told of it, or only in the sandbox. */
type Listed = 'always' | 'sandbox'

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const noop = () => {}

/**
 * Records every route the app registers from now on (call it before any route) in a router of its own, built as
 * Fastify's is (the same trailing-slash and parameter-length rules), so a path that exists for other methods can be
 * told apart from one that does not exist at all.
 */
export function installMethodIndex(app: FastifyInstance, maxParamLength: number): MethodIndex {
  const router = FindMyWay({ ignoreTrailingSlash: false, maxParamLength })
  const seen = new Set<string>()
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as { simulator?: boolean; capability?: unknown }
    if (config.capability) return
    const listed: Listed = config.simulator ? 'sandbox' : 'always'
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      const key = `${method} ${route.url}`
      if (seen.has(key)) continue
      seen.add(key)
      router.on(method as FindMyWay.HTTPMethod, route.url, noop, { listed })
    }
  })
  return {
    methodsOf(url, sandbox) {
      const path = url.split('?', 1)[0]!
      return ORDER.filter((method) => {
        const found = router.find(method as FindMyWay.HTTPMethod, path)
        return (
          found !== null && (sandbox || (found.store as { listed: Listed }).listed === 'always')
        )
      })
    },
  }
}
