import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible'
import type { Logger } from 'pino'
import type { Config, Environment } from '../config.js'
import { ApiError } from './errors.js'

/**
 * Per-client request budgets: one per environment, and a stricter one per (client, path) for GETs of a
 * single object ("polling"). In-process by default; Redis-backed when REDIS_URL is set so it holds across nodes.
 */
export class RateLimits {
  private readonly byEnv: Record<Environment, RateLimiterAbstract>
  private readonly polling: RateLimiterAbstract
  private redis: { status: string; quit(): Promise<unknown>; disconnect(): void } | null = null

  private constructor(
    make: (points: number, prefix: string) => RateLimiterAbstract,
    config: Config,
  ) {
    this.byEnv = {
      sandbox: make(config.rateLimits.sandboxPerSecond, 'rl_sandbox'),
      production: make(config.rateLimits.productionPerSecond, 'rl_production'),
    }
    this.polling = make(config.rateLimits.pollingPerSecond, 'rl_polling')
  }

  /**
   * With REDIS_URL the budgets live in Redis. If Redis is down (at start or later) each node falls back to
   * its in-process budget and the client keeps reconnecting, so an outage never stops the API.
   */
  static async create(config: Config, log?: Logger): Promise<RateLimits> {
    if (!config.redisUrl) {
      // Several HTTP processes without Redis: each holds an equal share, so together they never allow more
      // than the budget (a client whose connections all reach one process gets that share).
      const share = config.httpProcesses
      return new RateLimits(
        (points, keyPrefix) =>
          new RateLimiterMemory({ points: Math.ceil(points / share), duration: 1, keyPrefix }),
        config,
      )
    }
    const { Redis } = await import('ioredis')
    const client = new Redis(config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    })
    let healthy = true
    client.on('error', (err: Error) => {
      if (healthy)
        log?.warn(
          { err },
          'rate limits: Redis unreachable, using in-process budgets until it returns',
        )
      healthy = false
    })
    client.on('ready', () => {
      healthy = true
    })
    await client.connect().catch(() => {
      /* reported by the error listener; ioredis keeps retrying */
    })
    const insurance = (points: number, keyPrefix: string) =>
      new RateLimiterMemory({ points, duration: 1, keyPrefix })
    const limits = new RateLimits(
      (points, keyPrefix) =>
        new RateLimiterRedis({
          storeClient: client,
          points,
          duration: 1,
          keyPrefix,
          rejectIfRedisNotReady: true,
          insuranceLimiter: insurance(points, keyPrefix),
        }),
      config,
    )
    limits.redis = client
    return limits
  }

  /** Spends one request of the client's budget; throws `rate_limited` with Retry-After when it is empty. */
  async consume(
    clientId: string,
    environment: Environment,
    pollingPath: string | null,
  ): Promise<void> {
    try {
      await this.byEnv[environment].consume(clientId)
      if (pollingPath) await this.polling.consume(`${clientId}|${pollingPath}`)
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000))
        throw new ApiError('rate_limited', { headers: { 'Retry-After': String(retryAfter) } })
      }
      throw err
    }
  }

  async close(): Promise<void> {
    if (!this.redis) return
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis?.disconnect())
    else this.redis.disconnect()
  }
}
