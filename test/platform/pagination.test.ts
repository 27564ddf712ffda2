import assert from 'node:assert/strict'
import { after, afterEach, before, describe, test } from 'node:test'
import { Type } from 'typebox'
import { applyBounds, paginate, PageQuery, type PageParams } from '../../src/http/pagination.js'
import {
  createTenant,
  OPERATOR_TOKEN,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'

const DAY_MS = 24 * 60 * 60 * 1000

let t: TestApp
let tenant: TestClient
let token: string
/** Every program id of the tenant's sandbox, in list order. */
let allIds: string[]

async function list(query: string, bearer = token) {
  return t.api(bearer, 'GET', `/v1/programs${query}`)
}

async function errorOf(query: string, bearer = token) {
  const res = await list(query, bearer)
  assert.equal(res.statusCode, 400, res.body)
  return res.json().error
}

function tamper(cursor: string): string {
  const [payload, mac] = cursor.split('.')
  const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  body.k = allIds[0]
  return `${Buffer.from(JSON.stringify(body)).toString('base64url')}.${mac}`
}

describe('pagination on GET /v1/programs', () => {
  before(async () => {
    t = await startTestApp({
      beforeReady(app) {
        // Another list over the same rows: its cursors must not be accepted by /v1/programs, nor the reverse.
        app.get(
          '/v1/test/pagination/programs',
          { schema: { querystring: Type.Object(PageQuery, { additionalProperties: false }) } },
          async (req) =>
            paginate({
              ctx: req.ctx,
              cursors: t.deps.cursors,
              url: '/v1/test/pagination/programs',
              page: req.query as PageParams,
              sortKey: (r: { id: string }) => r.id,
              fetch: (bounds) =>
                applyBounds(
                  t.deps.db
                    .selectFrom('programs')
                    .select('id')
                    .where('organization_id', '=', req.ctx.organizationId),
                  bounds,
                  'id',
                  'asc',
                ).execute(),
              present: (r) => ({ id: r.id }),
            }),
        )
      },
    })
    tenant = await createTenant(t)
    for (let i = 0; i < 30; i++) {
      await t.operator('POST', '/operator/v1/programs', {
        organization_id: tenant.organizationId,
        environment: 'sandbox',
        name: `P${i}`,
        processor: i % 2 ? 'sim_full' : 'sim_basic',
        currencies: ['USD'],
      })
    }
    token = await tenant.token()
    const res = await list('?limit=100')
    allIds = res.json().data.map((p: { id: string }) => p.id)
    assert.equal(allIds.length, 32)
  })
  afterEach(() => t.clock.reset())
  after(() => t.close())

  test('a list answers the envelope: object list, url, data, has_more, next_cursor', async () => {
    const res = await list('')
    assert.equal(res.statusCode, 200)
    const page = res.json()
    assert.deepEqual(Object.keys(page).sort(), ['data', 'has_more', 'next_cursor', 'object', 'url'])
    assert.equal(page.object, 'list')
    assert.equal(page.url, '/v1/programs')
    assert.ok(Array.isArray(page.data))
  })

  test('the default page size is 25', async () => {
    const page = (await list('')).json()
    assert.equal(page.data.length, 25)
    assert.equal(page.has_more, true)
    assert.equal(typeof page.next_cursor, 'string')
  })

  test('limit accepts 1 to 100', async () => {
    assert.equal((await list('?limit=1')).json().data.length, 1)
    assert.equal((await list('?limit=100')).json().data.length, 32)
  })

  for (const bad of [
    '0',
    '101',
    '1000',
    '-1',
    '2.5',
    'ten',
    '',
    '0x10',
    '0b11',
    '1e1',
    '%2B7',
    '%207',
  ]) {
    test(`limit=${bad} answers 400 invalid_parameter on limit`, async () => {
      const error = await errorOf(`?limit=${bad}`)
      assert.equal(error.code, 'invalid_parameter')
      assert.equal(error.param, 'limit')
    })
  }

  test('following next_cursor visits every item exactly once in a stable order', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = (
        await list(`?limit=7${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`)
      ).json()
      pages++
      seen.push(...page.data.map((p: { id: string }) => p.id))
      if (!page.has_more) assert.equal(page.next_cursor, null)
      cursor = page.has_more ? page.next_cursor : null
    } while (cursor)
    assert.equal(pages, 5)
    assert.deepEqual(seen, allIds)
    assert.deepEqual([...allIds].sort(), allIds, 'ids are in their stable sort order')
  })

  test('the last page answers has_more false and next_cursor null, even when it is full', async () => {
    const first = (await list('?limit=16')).json()
    const last = (await list(`?limit=16&starting_after=${first.next_cursor}`)).json()
    assert.equal(last.data.length, 16)
    assert.equal(last.has_more, false)
    assert.equal(last.next_cursor, null)
  })

  test('an empty list answers data [] with has_more false', async () => {
    const org = await t.operator('POST', '/operator/v1/organizations', { name: 'Empty' })
    const empty = await createTenant(t, { organizationId: org.id })
    const page = (await list('', await empty.token())).json()
    assert.deepEqual(page.data, [])
    assert.equal(page.has_more, false)
    assert.equal(page.next_cursor, null)
  })

  test('ending_before answers the items just before the cursor, and its next_cursor keeps going back', async () => {
    const forward = (await list('?limit=20')).json()
    const back = (await list(`?limit=8&ending_before=${forward.next_cursor}`)).json()
    assert.deepEqual(
      back.data.map((p: { id: string }) => p.id),
      allIds.slice(11, 19),
    )
    assert.equal(back.has_more, true)
    const further = (await list(`?limit=8&ending_before=${back.next_cursor}`)).json()
    assert.deepEqual(
      further.data.map((p: { id: string }) => p.id),
      allIds.slice(3, 11),
    )
    const start = (await list(`?limit=8&ending_before=${further.next_cursor}`)).json()
    assert.deepEqual(
      start.data.map((p: { id: string }) => p.id),
      allIds.slice(0, 3),
    )
    assert.equal(start.has_more, false)
    assert.equal(start.next_cursor, null)
  })

  test("a backward page's next_cursor passed as starting_after keeps going back too, as the envelope says", async () => {
    const forward = (await list('?limit=20')).json()
    const back = (await list(`?limit=8&ending_before=${forward.next_cursor}`)).json()
    const further = (await list(`?limit=8&starting_after=${back.next_cursor}`)).json()
    assert.deepEqual(
      further.data.map((p: { id: string }) => p.id),
      allIds.slice(3, 11),
    )
    assert.equal(further.has_more, true)
    const start = (await list(`?limit=8&starting_after=${further.next_cursor}`)).json()
    assert.deepEqual(
      start.data.map((p: { id: string }) => p.id),
      allIds.slice(0, 3),
    )
    assert.equal(start.next_cursor, null)
    // A forward page's cursor is not turned around by ending_before's continuation rule.
    const next = (await list(`?limit=8&starting_after=${forward.next_cursor}`)).json()
    assert.deepEqual(
      next.data.map((p: { id: string }) => p.id),
      allIds.slice(20, 28),
    )
  })

  test('starting_after and ending_before together answer 400', async () => {
    const cursor = (await list('?limit=5')).json().next_cursor
    const error = await errorOf(`?starting_after=${cursor}&ending_before=${cursor}`)
    assert.equal(error.code, 'invalid_parameter')
  })

  test('a forged cursor answers invalid_parameter', async () => {
    const forged = `${Buffer.from(JSON.stringify({ k: allIds[3], t: Math.floor(Date.now() / 1000) })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`
    for (const cursor of [forged, allIds[3], 'not-a-cursor', 'a.b.c']) {
      const error = await errorOf(`?starting_after=${encodeURIComponent(cursor)}`)
      assert.equal(error.code, 'invalid_parameter', cursor)
      assert.equal(error.param, 'starting_after')
    }
  })

  test('an object id passed as a cursor is told to pass next_cursor instead', async () => {
    const error = await errorOf(`?starting_after=${allIds[3]}`)
    assert.equal(
      error.message,
      'starting_after takes a cursor, not an object id: pass the next_cursor of the previous page (starting_after=<next_cursor>).',
    )
    const other = await errorOf('?starting_after=not-a-cursor')
    assert.match(other.message, /pass the next_cursor of a page of this same list/)
  })

  test('a tampered cursor answers invalid_parameter', async () => {
    const cursor = (await list('?limit=5')).json().next_cursor
    const error = await errorOf(`?starting_after=${tamper(cursor)}`)
    assert.equal(error.code, 'invalid_parameter')
    const ending = await errorOf(`?ending_before=${tamper(cursor)}`)
    assert.equal(ending.code, 'invalid_parameter')
    assert.equal(ending.param, 'ending_before')
  })

  test("another organization's cursor answers invalid_parameter", async () => {
    const other = await createTenant(t)
    const otherToken = await other.token()
    const foreign = (await list('?limit=1', otherToken)).json().next_cursor
    assert.equal((await list(`?starting_after=${foreign}`, otherToken)).statusCode, 200)
    const error = await errorOf(`?starting_after=${foreign}`)
    assert.equal(error.code, 'invalid_parameter')
  })

  test("the same organization's cursor from its other environment answers invalid_parameter", async () => {
    await t.operator('POST', '/operator/v1/programs', {
      organization_id: tenant.organizationId,
      environment: 'production',
      name: 'Live',
      processor: 'sim_full',
      currencies: ['USD'],
    })
    await t.operator('POST', '/operator/v1/programs', {
      organization_id: tenant.organizationId,
      environment: 'production',
      name: 'Live 2',
      processor: 'sim_full',
      currencies: ['USD'],
    })
    const live = await createTenant(t, {
      organizationId: tenant.organizationId,
      environment: 'production',
    })
    const liveCursor = (await list('?limit=1', await live.token())).json().next_cursor
    assert.equal(typeof liveCursor, 'string')
    const error = await errorOf(`?starting_after=${liveCursor}`)
    assert.equal(error.code, 'invalid_parameter')
  })

  test("another list's cursor answers invalid_parameter, in both directions", async () => {
    const otherList = (await t.api(token, 'GET', '/v1/test/pagination/programs?limit=2')).json()
      .next_cursor
    const error = await errorOf(`?starting_after=${otherList}`)
    assert.equal(error.code, 'invalid_parameter')
    const mine = (await list('?limit=2')).json().next_cursor
    const res = await t.api(token, 'GET', `/v1/test/pagination/programs?starting_after=${mine}`)
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().error.code, 'invalid_parameter')
  })

  test('a cursor younger than 24 hours still works', async () => {
    const cursor = (await list('?limit=5')).json().next_cursor
    t.clock.advance(DAY_MS - 60_000)
    const res = await list(`?limit=5&starting_after=${cursor}`, await tenant.token())
    assert.equal(res.statusCode, 200)
    assert.deepEqual(
      res.json().data.map((p: { id: string }) => p.id),
      allIds.slice(5, 10),
    )
  })

  test('a cursor older than 24 hours answers 400 expired_cursor', async () => {
    const cursor = (await list('?limit=5')).json().next_cursor
    t.clock.advance(DAY_MS + 2000)
    const fresh = await tenant.token()
    const error = await errorOf(`?starting_after=${cursor}`, fresh)
    assert.equal(error.code, 'expired_cursor')
    assert.equal(error.param, 'starting_after')
    assert.equal(error.doc_url.endsWith('#expired_cursor'), true)
    const before = await errorOf(`?ending_before=${cursor}`, fresh)
    assert.equal(before.code, 'expired_cursor')
  })

  test('an unknown query parameter answers unknown_parameter (there are no offsets)', async () => {
    const error = await errorOf('?offset=10')
    assert.equal(error.code, 'unknown_parameter')
    assert.equal(error.param, 'offset')
  })
})

describe('operator lists', () => {
  let op: TestApp

  before(async () => {
    op = await startTestApp()
  })
  after(async () => {
    await op.close()
  })

  /** Every item of an operator list, walked `limit` at a time by next_cursor. */
  async function walk(path: string, limit: number): Promise<string[]> {
    const ids: string[] = []
    let cursor: string | null = null
    const sep = path.includes('?') ? '&' : '?'
    do {
      const page: { data: { id: string }[]; has_more: boolean; next_cursor: string | null } =
        await op.operator(
          'GET',
          `${path}${sep}limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`,
        )
      assert.ok(page.data.length <= limit)
      ids.push(...page.data.map((x) => x.id))
      cursor = page.next_cursor
      assert.equal(page.has_more, cursor !== null)
    } while (cursor)
    return ids
  }

  test('organizations, programs, clients and webhook endpoints paginate like every /v1 list', async () => {
    const orgs = []
    for (let i = 0; i < 5; i++) orgs.push(await createTenant(op))
    const org = orgs[0].organizationId
    for (const name of ['a', 'b', 'c']) {
      await op.operator('POST', '/operator/v1/clients', {
        organization_id: org,
        environment: 'sandbox',
        label: name,
        jwks: { keys: [orgs[0].publicJwk] },
      })
    }
    const token = await orgs[0].token()
    for (let i = 0; i < 3; i++) {
      const res = await op.api(token, 'POST', '/v1/webhook_endpoints', {
        url: `https://hooks.example.com/${i}`,
        enabled_events: ['*'],
      })
      assert.equal(res.statusCode, 201, res.body)
    }
    const everything = async (path: string) =>
      (await op.operator('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100`)).data.map(
        (x: { id: string }) => x.id,
      )
    for (const path of [
      '/operator/v1/organizations',
      `/operator/v1/programs?organization_id=${org}`,
      `/operator/v1/clients?organization_id=${org}`,
      `/operator/v1/webhook_endpoints?organization_id=${org}`,
    ]) {
      const all = await everything(path)
      assert.ok(all.length >= 2, `${path}: ${all.length}`)
      assert.deepEqual(await walk(path, 1), all, path)
    }
    const bad = await op.app.inject({
      method: 'GET',
      url: '/operator/v1/organizations?limit=abc',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    })
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.json().error.param, 'limit')
  })
})
