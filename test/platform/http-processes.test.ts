import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import {
  accessToken,
  createTenant,
  startServer,
  type BenchClient,
  type BenchServer,
} from '../../bench/platform-harness.js'

/** One request on a connection of its own, so the cluster hands successive requests to different processes. */
function get(server: BenchServer, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      server.baseUrl + path,
      { agent: false, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

// A real `svc serve` with HTTP_PROCESSES=2 on a PostgreSQL database of its own (the embedded database
// belongs to one process, so this needs DATABASE_URL).
describe('several HTTP processes', { skip: !process.env.DATABASE_URL }, () => {
  let server: BenchServer
  let tenant: BenchClient
  let database: pg.Client

  before(async () => {
    process.env.BENCH_DATABASE_URL ??= process.env.DATABASE_URL
    server = await startServer({ HTTP_PROCESSES: '2', RATE_LIMIT_SANDBOX: '1000' })
    database = new pg.Client({ connectionString: server.databaseUrl })
    await database.connect()
    tenant = await createTenant(server)
  })
  after(async () => {
    await database?.end()
    await server?.stop()
  })

  test('two processes serve the port, each listening for authorization changes', async () => {
    const deadline = Date.now() + 10_000
    let listeners = 0
    while (Date.now() < deadline) {
      const { rows } = await database.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN svc_auth'`,
      )
      listeners = rows[0].n
      if (listeners === 2) break
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.equal(listeners, 2)
  })

  test('a revoked client is refused at once by every process, including those that had its token cached', async () => {
    const token = await accessToken(tenant)
    const before = await Promise.all(
      Array.from({ length: 12 }, () => get(server, '/v1/programs', token)),
    )
    assert.deepEqual(new Set(before), new Set([200]))
    await server.operator('POST', `/operator/v1/clients/${tenant.clientId}/revoke`)
    const afterRevoke = await Promise.all(
      Array.from({ length: 12 }, () => get(server, '/v1/programs', token)),
    )
    assert.deepEqual(new Set(afterRevoke), new Set([401]))
  })
})
