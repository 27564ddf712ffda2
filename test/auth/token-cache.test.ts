import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import pino from 'pino'
import { openDatabase, type DbHandle } from '../../src/db/client.js'
import { AUTH_CHANNEL, changeAuthorization, TokenCache } from '../../src/http/token-cache.js'
import { freshDatabaseUrl } from '../helpers/db.js'

const log = pino({ level: 'silent' })
const row = { client_id: 'oc_1' }

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 5000,
): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('token cache', () => {
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
  let handle: DbHandle

  before(async () => {
    database = await freshDatabaseUrl()
    handle = await openDatabase({ databaseUrl: database.url, dataDir: null })
  })
  after(async () => {
    await handle.close()
    await database.drop()
  })

  /** A cache whose announcements channel is up (at once on PGlite, after LISTEN on PostgreSQL). */
  async function liveCache(): Promise<TokenCache<typeof row>> {
    const cache = new TokenCache<typeof row>(database.url, log)
    await until(() => {
      cache.put('probe', row, cache.mark(), Date.now())
      return cache.get('probe', Date.now()) !== undefined
    }, 'the cache to go live')
    return cache
  }

  /** Runs `use` with a live cache, closed afterwards. */
  async function withLiveCache(
    use: (cache: TokenCache<typeof row>) => Promise<void>,
  ): Promise<void> {
    const cache = await liveCache()
    try {
      await use(cache)
    } finally {
      await cache.close()
    }
  }

  /** `withLiveCache` plus a second PostgreSQL connection, standing for another process. */
  async function withCacheAndPeer(
    use: (cache: TokenCache<typeof row>, peer: pg.Client) => Promise<void>,
  ): Promise<void> {
    await withLiveCache(async (cache) => {
      const peer = new pg.Client({ connectionString: database.url! })
      await peer.connect()
      try {
        await use(cache, peer)
      } finally {
        await peer.end()
      }
    })
  }

  test('an answer read while an authorization change committed is not kept', async () => {
    await withLiveCache(async (cache) => {
      const mark = cache.mark()
      await changeAuthorization(handle.db, async () => {})
      cache.put('h1', row, mark, Date.now())
      assert.equal(cache.get('h1', Date.now()), undefined)
      cache.put('h1', row, cache.mark(), Date.now())
      assert.deepEqual(cache.get('h1', Date.now()), row)
    })
  })

  test('a change drops every cached token of the process, and a cached answer expires after a minute', async () => {
    await withLiveCache(async (cache) => {
      const now = Date.now()
      cache.put('h1', row, cache.mark(), now)
      assert.deepEqual(cache.get('h1', now + 59_000), row)
      assert.equal(cache.get('h1', now + 60_000), undefined)
      cache.put('h2', row, cache.mark(), Date.now())
      await changeAuthorization(handle.db, async () => {})
      assert.equal(cache.get('h2', Date.now()), undefined)
    })
  })

  test('on PostgreSQL, a change committed by another process reaches the cache through NOTIFY', {
    skip: !process.env.DATABASE_URL,
  }, async () => {
    await withCacheAndPeer(async (cache, other) => {
      cache.put('h1', row, cache.mark(), Date.now())
      await other.query(`SELECT pg_notify('${AUTH_CHANNEL}', '')`)
      await until(() => cache.get('h1', Date.now()) === undefined, 'the notification')
    })
  })

  test('on PostgreSQL, while the notification connection is down nothing is cached or answered', {
    skip: !process.env.DATABASE_URL,
  }, async () => {
    await withCacheAndPeer(async (cache, admin) => {
      cache.put('h1', row, cache.mark(), Date.now())
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ${AUTH_CHANNEL}'`,
      )
      assert.equal(rowCount, 1)
      await until(() => cache.get('h1', Date.now()) === undefined, 'the cache to go dark')
      cache.put('h2', row, cache.mark(), Date.now())
      assert.equal(cache.get('h2', Date.now()), undefined)
      // Back after the reconnect, empty.
      await until(
        () => {
          cache.put('h3', row, cache.mark(), Date.now())
          return cache.get('h3', Date.now()) !== undefined
        },
        'the reconnect',
        8000,
      )
      assert.equal(cache.get('h1', Date.now()), undefined)
    })
  })
})
